import { Route, Routes } from 'react-router';
import { RouteError } from '../../app/route-error.js';
import { StatsPage } from './stats-page.js';
import { TraceList } from './trace-list.js';
import { TraceView } from './trace-view.js';

/** Traces: /traces (list with filters), /traces/stats (statistics), /traces/<trace_id> (waterfall). */
export function Component() {
  return (
    <Routes>
      <Route index element={<TraceList />} />
      <Route path="stats" element={<StatsPage />} />
      <Route path=":traceId" element={<TraceView />} />
      <Route path="*" element={<RouteError notFound />} />
    </Routes>
  );
}
