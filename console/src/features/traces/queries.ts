import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type {
  EndpointStat,
  ModelStat,
  ServiceStat,
  TraceDetail,
  TraceFilters,
  TraceSummary,
} from '../../api/types.js';
import type { TimeWindow } from './time-window.js';

export const TRACE_PAGE = 50;

export function useTraces(window: TimeWindow, filters: TraceFilters, offset: number) {
  return useQuery({
    queryKey: ['traces', window, filters, offset],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<TraceSummary[]>(
        api.GET('/api/agent-server/traces', {
          params: { query: { ...window, ...filters, limit: TRACE_PAGE, offset } },
        }),
      ),
  });
}

export function useTrace(traceId: string) {
  return useQuery({
    queryKey: ['trace', traceId],
    enabled: /^[0-9a-f]{32}$/.test(traceId),
    queryFn: () =>
      unwrap<TraceDetail>(
        api.GET('/api/agent-server/traces/{trace_id}', { params: { path: { trace_id: traceId } } }),
      ),
  });
}

/** `withConsole`: count the console's own requests too (include_console). */
const consoleQuery = (withConsole: boolean) => (withConsole ? { include_console: true } : {});

export function useEndpointStats(
  window: TimeWindow,
  spanKind: string | undefined,
  service: string | undefined,
  withConsole = false,
) {
  return useQuery({
    queryKey: ['trace-stats', 'endpoints', window, spanKind, service, withConsole],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<EndpointStat[]>(
        api.GET('/api/agent-server/traces/stats/endpoints', {
          params: {
            query: {
              ...window,
              ...(spanKind ? { span_kind: spanKind as 'SERVER' } : {}),
              ...(service ? { service_name: service } : {}),
              ...consoleQuery(withConsole),
              limit: 200,
            },
          },
        }),
      ),
  });
}

export function useServiceStats(window: TimeWindow, withConsole = false) {
  return useQuery({
    queryKey: ['trace-stats', 'services', window, withConsole],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<ServiceStat[]>(
        api.GET('/api/agent-server/traces/stats/services', {
          params: { query: { ...window, ...consoleQuery(withConsole) } },
        }),
      ),
  });
}

export function useModelStats(window: TimeWindow, projectId: string | undefined, withConsole = false) {
  return useQuery({
    queryKey: ['trace-stats', 'models', window, projectId, withConsole],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<ModelStat[]>(
        api.GET('/api/agent-server/traces/stats/models', {
          params: {
            query: {
              ...window,
              ...(projectId ? { project_id: projectId } : {}),
              ...consoleQuery(withConsole),
            },
          },
        }),
      ),
  });
}
