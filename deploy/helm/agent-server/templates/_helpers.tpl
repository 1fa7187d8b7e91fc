{{/* Names */}}
{{- define "agent-server.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-server.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "agent-server.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-server.labels" -}}
helm.sh/chart: {{ include "agent-server.chart" . }}
{{ include "agent-server.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: agent-server
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "agent-server.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-server.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one component: pass (dict "root" $ "component" "api") */}}
{{- define "agent-server.componentLabels" -}}
{{ include "agent-server.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "agent-server.componentSelectorLabels" -}}
{{ include "agent-server.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "agent-server.annotations" -}}
{{- with .Values.commonAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "agent-server.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "agent-server.apiServiceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (printf "%s-api" (include "agent-server.fullname" .)) .Values.serviceAccount.apiName | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- default "default" .Values.serviceAccount.apiName }}
{{- end }}
{{- end }}

{{- define "agent-server.workerServiceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (printf "%s-worker" (include "agent-server.fullname" .)) .Values.serviceAccount.workerName | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- default "default" .Values.serviceAccount.workerName }}
{{- end }}
{{- end }}

{{/* Sandboxes */}}
{{- define "agent-server.k8sSandbox" -}}
{{- if and .Values.sandbox.enabled (eq .Values.sandbox.backend "kubernetes") }}true{{- end }}
{{- end }}

{{- define "agent-server.sandboxNamespace" -}}
{{- default (printf "%s-sandboxes" (include "agent-server.fullname" .) | trunc 63 | trimSuffix "-") .Values.sandbox.kubernetes.namespace }}
{{- end }}

{{- define "agent-server.sandboxInstallation" -}}
{{- default (include "agent-server.fullname" .) .Values.sandbox.installation }}
{{- end }}

{{/* Secrets */}}
{{- define "agent-server.secretName" -}}
{{- include "agent-server.fullname" . }}
{{- end }}

{{/* The chart's own Secret is rendered when it has at least one value to hold. */}}
{{- define "agent-server.createSecret" -}}
{{- $v := .Values }}
{{- if or (and (not $v.secrets.existingSecret) (or $v.secrets.secretsKey $v.secrets.adminToken $v.secrets.sandboxTokenSecret $v.secrets.secretsKeyPrevious $v.secrets.metricsToken)) (and (not $v.postgresql.existingSecret) $v.postgresql.url) (and (not $v.temporal.apiKey.existingSecret) $v.temporal.apiKey.value) }}true{{- end }}
{{- end }}

{{/* METRICS_TOKEN is configured: in the chart's Secret, or under a key of the existing one. */}}
{{- define "agent-server.hasMetricsToken" -}}
{{- $s := .Values.secrets }}
{{- if or (and (not $s.existingSecret) $s.metricsToken) (and $s.existingSecret $s.existingSecretKeys.metricsToken) }}true{{- end }}
{{- end }}

{{/* The Secret key /metrics asks for (METRICS_TOKEN, else ADMIN_TOKEN), as a secretKeySelector. */}}
{{- define "agent-server.metricsTokenSelector" -}}
{{- $s := .Values.secrets }}
{{- $metrics := include "agent-server.hasMetricsToken" . }}
name: {{ $s.existingSecret | default (include "agent-server.secretName" .) }}
{{- if and $s.existingSecret $metrics }}
key: {{ $s.existingSecretKeys.metricsToken }}
{{- else if $s.existingSecret }}
key: {{ $s.existingSecretKeys.adminToken }}
{{- else if $metrics }}
key: METRICS_TOKEN
{{- else }}
key: ADMIN_TOKEN
{{- end }}
{{- end }}

{{/*
ALLOWED_HOSTS of the api: the ingress hosts, the Service's names in the
cluster, and api.allowedHosts. Loopback names are always allowed by the api;
probes and /metrics are not checked (they use the pod's IP).
*/}}
{{- define "agent-server.allowedHosts" -}}
{{- $svc := include "agent-server.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- with .host }}{{ $hosts = append $hosts . }}{{ end }}
{{- end }}
{{- end }}
{{- $hosts = concat $hosts (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.clusterDomain)) }}
{{- $hosts = concat $hosts .Values.api.allowedHosts }}
{{- join "," (uniq $hosts) }}
{{- end }}

{{/* Fails the render with one line naming the value an operator must set. */}}
{{- define "agent-server.validate" -}}
{{- $v := .Values }}
{{- if not $v.temporal.address }}
{{- fail "temporal.address is required (host:port of the Temporal frontend, e.g. temporal-frontend.temporal:7233)" }}
{{- end }}
{{- if and $v.postgresql.existingSecret $v.postgresql.url }}
{{- fail "set either postgresql.url or postgresql.existingSecret, not both" }}
{{- end }}
{{- if not (or $v.postgresql.existingSecret $v.postgresql.url) }}
{{- fail "postgresql.url or postgresql.existingSecret is required (the DATABASE_URL)" }}
{{- end }}
{{- if $v.secrets.existingSecret }}
{{- if or $v.secrets.secretsKey $v.secrets.adminToken $v.secrets.sandboxTokenSecret $v.secrets.secretsKeyPrevious $v.secrets.metricsToken }}
{{- fail "secrets.existingSecret is set: leave secrets.secretsKey, secrets.secretsKeyPrevious, secrets.adminToken, secrets.metricsToken and secrets.sandboxTokenSecret empty (their keys are read from the existing Secret)" }}
{{- end }}
{{- else }}
{{- if not $v.secrets.secretsKey }}
{{- fail "secrets.secretsKey (32 random bytes, base64: openssl rand -base64 32) or secrets.existingSecret is required" }}
{{- end }}
{{- if not $v.secrets.adminToken }}
{{- fail "secrets.adminToken (at least 16 characters) or secrets.existingSecret is required: the API is reachable from the cluster" }}
{{- end }}
{{- if and $v.sandbox.enabled (not $v.secrets.sandboxTokenSecret) }}
{{- fail "sandbox.enabled needs secrets.sandboxTokenSecret (at least 32 characters) or secrets.existingSecret" }}
{{- end }}
{{- end }}
{{- if and $v.temporal.apiKey.existingSecret $v.temporal.apiKey.value }}
{{- fail "set either temporal.apiKey.value or temporal.apiKey.existingSecret, not both" }}
{{- end }}
{{- if and $v.temporal.tls.enabled $v.temporal.tls.client.secretName (not (and $v.temporal.tls.client.certKey $v.temporal.tls.client.keyKey)) }}
{{- fail "temporal.tls.client needs certKey and keyKey" }}
{{- end }}
{{- if and (or $v.postgresql.ssl.ca.secretName $v.postgresql.ssl.client.secretName) (not (has $v.postgresql.ssl.mode (list "require" "verify-ca" "verify-full"))) }}
{{- fail "postgresql.ssl.ca / postgresql.ssl.client need postgresql.ssl.mode require, verify-ca or verify-full" }}
{{- end }}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled" }}
{{- end }}
{{- end }}

{{/* secretKeyRef to a key of the chart's Secret or of an existing one: (dict "existing" name "key" key "ownKey" key "root" $ "optional" bool) */}}
{{- define "agent-server.secretRef" -}}
valueFrom:
  secretKeyRef:
    {{- if .existing }}
    name: {{ .existing }}
    key: {{ .key }}
    {{- else }}
    name: {{ include "agent-server.secretName" .root }}
    key: {{ .ownKey }}
    {{- end }}
    {{- if .optional }}
    optional: true
    {{- end }}
{{- end }}

{{/* Environment of the database connection (api, worker, migrations). $dbSecret overrides the Secret holding DATABASE_URL. */}}
{{- define "agent-server.databaseEnv" -}}
{{- $root := .root }}
{{- $v := $root.Values -}}
- name: DATABASE_URL
  {{- if .dbSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .dbSecret }}
      key: DATABASE_URL
  {{- else }}
  {{- include "agent-server.secretRef" (dict "existing" $v.postgresql.existingSecret "key" $v.postgresql.existingSecretKey "ownKey" "DATABASE_URL" "root" $root) | nindent 2 }}
  {{- end }}
{{- with $v.postgresql.ssl.mode }}
- name: DATABASE_SSL_MODE
  value: {{ . | quote }}
{{- end }}
{{- if $v.postgresql.ssl.ca.secretName }}
- name: DATABASE_SSL_CA
  value: /etc/agent-server/postgresql-tls/ca.crt
{{- end }}
{{- if $v.postgresql.ssl.client.secretName }}
- name: DATABASE_SSL_CERT
  value: /etc/agent-server/postgresql-tls/tls.crt
- name: DATABASE_SSL_KEY
  value: /etc/agent-server/postgresql-tls/tls.key
{{- end }}
{{- end }}

{{/* Environment shared by the api and the worker. */}}
{{- define "agent-server.commonEnv" -}}
{{- $v := .Values -}}
- name: LOG_LEVEL
  value: {{ $v.config.logLevel | quote }}
- name: LOG_FORMAT
  value: json
- name: SHUTDOWN_TIMEOUT_MS
  value: {{ $v.config.shutdownTimeoutMs | int64 | quote }}
- name: DATA_DIR
  value: {{ $v.config.dataDir | quote }}
- name: TEMPORAL_ADDRESS
  value: {{ $v.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ $v.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ $v.temporal.taskQueue | quote }}
{{- with $v.temporal.uiUrl }}
- name: TEMPORAL_UI_URL
  value: {{ . | quote }}
{{- end }}
{{- if $v.temporal.tls.enabled }}
- name: TEMPORAL_TLS
  value: "true"
{{- with $v.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if $v.temporal.tls.ca.secretName }}
- name: TEMPORAL_TLS_CA
  value: /etc/agent-server/temporal-tls/ca.crt
{{- end }}
{{- if $v.temporal.tls.client.secretName }}
- name: TEMPORAL_TLS_CERT
  value: /etc/agent-server/temporal-tls/tls.crt
- name: TEMPORAL_TLS_KEY
  value: /etc/agent-server/temporal-tls/tls.key
{{- end }}
{{- end }}
{{- if or $v.temporal.apiKey.existingSecret $v.temporal.apiKey.value }}
- name: TEMPORAL_API_KEY
  {{- include "agent-server.secretRef" (dict "existing" $v.temporal.apiKey.existingSecret "key" $v.temporal.apiKey.key "ownKey" "TEMPORAL_API_KEY" "root" .) | nindent 2 }}
{{- end }}
{{ include "agent-server.databaseEnv" (dict "root" .) }}
- name: SECRETS_KEY
  {{- include "agent-server.secretRef" (dict "existing" $v.secrets.existingSecret "key" $v.secrets.existingSecretKeys.secretsKey "ownKey" "SECRETS_KEY" "root" .) | nindent 2 }}
{{- if or $v.secrets.existingSecret $v.secrets.secretsKeyPrevious }}
- name: SECRETS_KEY_PREVIOUS
  {{- include "agent-server.secretRef" (dict "existing" $v.secrets.existingSecret "key" $v.secrets.existingSecretKeys.secretsKeyPrevious "ownKey" "SECRETS_KEY_PREVIOUS" "root" . "optional" true) | nindent 2 }}
{{- end }}
- name: ADMIN_TOKEN
  {{- include "agent-server.secretRef" (dict "existing" $v.secrets.existingSecret "key" $v.secrets.existingSecretKeys.adminToken "ownKey" "ADMIN_TOKEN" "root" .) | nindent 2 }}
{{- if include "agent-server.hasMetricsToken" . }}
- name: METRICS_TOKEN
  {{- include "agent-server.secretRef" (dict "existing" $v.secrets.existingSecret "key" $v.secrets.existingSecretKeys.metricsToken "ownKey" "METRICS_TOKEN" "root" .) | nindent 2 }}
{{- end }}
- name: METRICS_ENABLED
  value: {{ $v.metrics.enabled | quote }}
- name: METRICS_REQUIRE_TOKEN
  value: {{ $v.metrics.requireToken | quote }}
- name: SANDBOX_ENABLED
  value: {{ $v.sandbox.enabled | quote }}
{{- range $name, $value := $v.config.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with $v.config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Per-component plain env map and raw list: (dict "env" map "extraEnv" list) */}}
{{- define "agent-server.componentEnv" -}}
{{- range $name, $value := .env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with .extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Volumes for /tmp and the certificate files (api, worker). */}}
{{- define "agent-server.volumes" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.medium }}
    medium: {{ . }}
    {{- end }}
    {{- with .Values.tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- include "agent-server.postgresqlTlsVolume" . }}
{{- $tls := .Values.temporal.tls }}
{{- if and $tls.enabled (or $tls.ca.secretName $tls.client.secretName) }}
- name: temporal-tls
  projected:
    defaultMode: 288 # 0440: owner and group (fsGroup) read
    sources:
      {{- if $tls.ca.secretName }}
      - secret:
          name: {{ $tls.ca.secretName }}
          items:
            - key: {{ $tls.ca.key }}
              path: ca.crt
      {{- end }}
      {{- if $tls.client.secretName }}
      - secret:
          name: {{ $tls.client.secretName }}
          items:
            - key: {{ $tls.client.certKey }}
              path: tls.crt
            - key: {{ $tls.client.keyKey }}
              path: tls.key
      {{- end }}
{{- end }}
{{- end }}

{{- define "agent-server.postgresqlTlsVolume" -}}
{{- $ssl := .Values.postgresql.ssl }}
{{- if or $ssl.ca.secretName $ssl.client.secretName }}
- name: postgresql-tls
  projected:
    defaultMode: 288 # 0440: owner and group (fsGroup) read
    sources:
      {{- if $ssl.ca.secretName }}
      - secret:
          name: {{ $ssl.ca.secretName }}
          items:
            - key: {{ $ssl.ca.key }}
              path: ca.crt
      {{- end }}
      {{- if $ssl.client.secretName }}
      - secret:
          name: {{ $ssl.client.secretName }}
          items:
            - key: {{ $ssl.client.certKey }}
              path: tls.crt
            - key: {{ $ssl.client.keyKey }}
              path: tls.key
      {{- end }}
{{- end }}
{{- end }}

{{- define "agent-server.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- include "agent-server.postgresqlTlsVolumeMount" . }}
{{- $tls := .Values.temporal.tls }}
{{- if and $tls.enabled (or $tls.ca.secretName $tls.client.secretName) }}
- name: temporal-tls
  mountPath: /etc/agent-server/temporal-tls
  readOnly: true
{{- end }}
{{- end }}

{{- define "agent-server.postgresqlTlsVolumeMount" -}}
{{- $ssl := .Values.postgresql.ssl }}
{{- if or $ssl.ca.secretName $ssl.client.secretName }}
- name: postgresql-tls
  mountPath: /etc/agent-server/postgresql-tls
  readOnly: true
{{- end }}
{{- end }}

{{/* Pod-level fields shared by every pod of the chart. */}}
{{- define "agent-server.podCommon" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Scheduling fields of a component: pass its values. */}}
{{- define "agent-server.scheduling" -}}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Seconds: ceil(ms / 1000). */}}
{{- define "agent-server.shutdownSeconds" -}}
{{- $ms := .Values.config.shutdownTimeoutMs | int64 }}
{{- div (add $ms 999) 1000 }}
{{- end }}

{{/* A PodDisruptionBudget's bound: (dict "pdb" values) */}}
{{- define "agent-server.pdbSpec" -}}
{{- if not (eq (toString .pdb.minAvailable) "") }}
minAvailable: {{ .pdb.minAvailable }}
{{- else }}
maxUnavailable: {{ .pdb.maxUnavailable | default 1 }}
{{- end }}
{{- end }}
