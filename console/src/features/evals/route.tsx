import { Route, Routes } from 'react-router';
import { EvalList } from './eval-list.js';
import { EvalPage } from './eval-page.js';

/** Evals: /evals (the project's evals, and a new one) and /evals/<id> (progress, totals, answers side by side). */
export function Component() {
  return (
    <Routes>
      <Route index element={<EvalList />} />
      <Route path=":id" element={<EvalPage />} />
    </Routes>
  );
}
