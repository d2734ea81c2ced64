{{/*
holdfast: the image helpers of the `common` library chart that upstream
Karmada's chart includes (27 calls in templates/_helpers.tpl), written for
holdfast; see Chart.yaml for why a stand-in exists at all.
*/}}

{{/*
common.images.image renders an image reference.
  (dict "imageRoot" .Values.x.image "global" .Values.global ["chart" .Chart])
imageRoot: registry, repository, tag, digest. A non-empty global.imageRegistry
replaces every image's registry, so one value moves a whole install to a mirror.
A digest wins over a tag ("repo@sha256:..."); with neither a tag nor a digest
the chart's appVersion is the tag when "chart" is given.
*/}}
{{- define "common.images.image" -}}
{{- $registry := toString (.imageRoot.registry | default "") -}}
{{- with .global }}{{ with .imageRegistry }}{{ $registry = toString . }}{{ end }}{{ end -}}
{{- $repository := toString (.imageRoot.repository | default "") -}}
{{- $separator := ":" -}}
{{- $reference := toString (.imageRoot.tag | default "") -}}
{{- if and (not $reference) .chart -}}
{{- $reference = toString .chart.AppVersion -}}
{{- end -}}
{{- with .imageRoot.digest -}}
{{- $separator = "@" -}}
{{- $reference = toString . -}}
{{- end -}}
{{- if $registry -}}
{{- printf "%s/%s%s%s" $registry $repository $separator $reference -}}
{{- else -}}
{{- printf "%s%s%s" $repository $separator $reference -}}
{{- end -}}
{{- end -}}

{{/*
common.images.pullSecrets renders an imagePullSecrets field, or nothing.
  (dict "images" (list .Values.x.image ...) "global" .Values.global)
It gathers global.imagePullSecrets and every image's pullSecrets, each given
as a name or as {name: ...}, drops repeats and keeps their first order.
*/}}
{{- define "common.images.pullSecrets" -}}
{{- $names := list -}}
{{- $sources := list -}}
{{- with .global }}{{ $sources = append $sources (.imagePullSecrets | default list) }}{{ end -}}
{{- range .images }}{{ $sources = append $sources (.pullSecrets | default list) }}{{ end -}}
{{- range $sources -}}
{{- range . -}}
{{- if kindIs "map" . -}}
{{- $names = append $names (toString .name) -}}
{{- else -}}
{{- $names = append $names (toString .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- with ($names | uniq) -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}
