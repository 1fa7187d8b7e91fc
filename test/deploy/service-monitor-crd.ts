/**
 * A minimal CustomResourceDefinition for prometheus-operator's ServiceMonitor,
 * so the API server serves the kind and a dry run of the chart's
 * ServiceMonitors is judged on group, version, kind, scope and metadata. Its
 * spec is left open (x-kubernetes-preserve-unknown-fields): the upstream CRD's
 * schema ships only as YAML from the operator's releases, which cannot be
 * fetched here; the spec is validated against the operator's own schema,
 * compiled into @kubernetes-models/prometheus-operator, by helm-chart.test.ts.
 */
import type { K8sObject } from '../helpers/helm.js';

export const SERVICE_MONITOR_CRD: K8sObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'servicemonitors.monitoring.coreos.com' },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: {
      plural: 'servicemonitors',
      singular: 'servicemonitor',
      kind: 'ServiceMonitor',
      listKind: 'ServiceMonitorList',
      shortNames: ['smon'],
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['spec'],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};
