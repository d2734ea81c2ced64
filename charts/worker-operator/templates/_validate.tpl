{{/*
Checks values.schema.json cannot express (it sees values, not the release,
and cannot compare two values). Each message names the value to change.
*/}}
{{- define "worker-operator.validate" -}}
{{- $ns := include "worker-operator.namespace" . -}}
{{- if ne .Release.Namespace $ns -}}
{{- fail (printf "install into namespace %s (helm --namespace %s --create-namespace), not %q: worker-operator v1.6.4 hard-codes it" $ns $ns .Release.Namespace) -}}
{{- end -}}
{{- with dig "secondary" "endpoint" "" .Values.hub -}}
{{- if eq (include "worker-operator.normalizedEndpoint" .) (include "worker-operator.normalizedEndpoint" $.Values.hub.primary.endpoint) -}}
{{- fail (printf "hub.secondary.endpoint %q names the same hub as hub.primary.endpoint: set it to the other hub of the Active/Standby pair, or leave it empty to turn failover following off" .) -}}
{{- end -}}
{{- end -}}
{{- $fromValue := dict
  "CLUSTER_NAME" "clusterName"
  "HUB_PROJECT_NAMESPACE" "hub.projectNamespace"
  "HUB_HOST_ENDPOINT" "hub.primary.endpoint"
  "HUB_TOKEN_FILE" "hub.primary.secretName"
  "HUB_CA_FILE" "hub.primary.secretName"
  "HUB_SECONDARY_HOST_ENDPOINT" "hub.secondary.endpoint"
  "HUB_SECONDARY_TOKEN_FILE" "hub.secondary.secretName"
  "HUB_SECONDARY_CA_FILE" "hub.secondary.secretName"
  "HUB_RESOLVE_INTERVAL" "hub.resolveInterval"
  "HUB_RESOLVE_TIMEOUT" "hub.resolveTimeout"
  "HUB_SWITCH_CONFIRMATIONS" "hub.switchConfirmations"
  "OWN_CREDENTIAL_GUARD_ACTION" "ownCredentialGuard.action"
  "OWN_CREDENTIAL_GUARD_THRESHOLD" "ownCredentialGuard.threshold"
  "OWN_CREDENTIAL_GUARD_WINDOW" "ownCredentialGuard.window"
  "OWN_CREDENTIAL_GUARD_MIN_DURATION" "ownCredentialGuard.minDuration" -}}
{{- range $env := .Values.extraEnv -}}
{{- $name := toString $env.name -}}
{{- with get $fromValue $name -}}
{{- fail (printf "extraEnv sets %s, which the chart sets from %s: set that value instead" $name .) -}}
{{- end -}}
{{- if eq $name "ENABLE_WEBHOOKS" -}}
{{- fail "extraEnv sets ENABLE_WEBHOOKS, which the chart sets to \"false\": it installs no webhook configuration or serving certificate" -}}
{{- end -}}
{{- end -}}
{{- end -}}
