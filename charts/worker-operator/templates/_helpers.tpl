{{/*
Names are upstream's (config/default adds the "kubeslice-" prefix to
config/'s names), not derived from the release: the worker is one per
cluster, in the one namespace it hard-codes, and the docs' commands use them.
*/}}
{{- define "worker-operator.namespace" -}}kubeslice-system{{- end -}}
{{- define "worker-operator.deploymentName" -}}kubeslice-operator{{- end -}}
{{- define "worker-operator.serviceAccountName" -}}kubeslice-controller-manager{{- end -}}

{{/* Selector labels: upstream's Deployment selector, unchanged. */}}
{{- define "worker-operator.selectorLabels" -}}
control-plane: controller-manager
{{- end -}}

{{- define "worker-operator.labels" -}}
{{ include "worker-operator.selectorLabels" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The manager image: registry/repository, then @digest, else :tag, else :appVersion. */}}
{{- define "worker-operator.image" -}}
{{- $ref := printf "%s/%s" .Values.image.registry .Values.image.repository | trimPrefix "/" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $ref .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}

{{/*
Where the hub credentials are mounted: the defaults of HUB_TOKEN_FILE /
HUB_CA_FILE and HUB_SECONDARY_TOKEN_FILE / HUB_SECONDARY_CA_FILE, so the
chart sets none of those variables.
*/}}
{{- define "worker-operator.primaryMountPath" -}}/var/run/secrets/kubernetes.io/hub-serviceaccount{{- end -}}
{{- define "worker-operator.secondaryMountPath" -}}/var/run/secrets/kubernetes.io/hub-secondary-serviceaccount{{- end -}}

{{/*
worker-operator.upstreamConfig reads one of upstream's config/ files that
`holdfast charts build` copies into the chart from the pinned worker-operator
tree, and fails when it is missing: the chart in the holdfast repository is
not installable until it is staged.
*/}}
{{- define "worker-operator.upstreamConfig" -}}
{{- $data := .root.Files.Get .path -}}
{{- if not $data -}}
{{- fail (printf "%s is missing: this chart takes it from the pinned worker-operator tree; build the chart with `holdfast charts build`" .path) -}}
{{- end -}}
{{- $data -}}
{{- end -}}

{{/*
worker-operator.normalizedEndpoint lower-cases an endpoint and drops a
trailing slash and the default port, enough to tell when the secondary names
the primary (the worker normalises the same way and turns the feature off).
*/}}
{{- define "worker-operator.normalizedEndpoint" -}}
{{- . | lower | trimSuffix "/" | replace ":443/" "/" | trimSuffix ":443" -}}
{{- end -}}
