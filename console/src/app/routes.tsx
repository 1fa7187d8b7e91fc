import { createBrowserRouter, Navigate } from 'react-router';
import { Loading } from '../components/loading.js';
import { Layout } from './layout.js';
import { RouteError } from './route-error.js';

/**
 * One lazily loaded module per page area (console/src/features/<area>/): the
 * first page ships only the shell and its own page's code.
 */
export const router = createBrowserRouter(
  [
    {
      path: '/',
      element: <Layout />,
      errorElement: <RouteError />,
      // Shown while the first page's lazily loaded module arrives (react-router
      // warns on every load without one).
      hydrateFallbackElement: <Loading what="Loading the console" />,
      children: [
        { index: true, element: <Navigate to="/playground" replace /> },
        { path: 'playground', lazy: () => import('../features/playground/route.js') },
        { path: 'sessions/*', lazy: () => import('../features/sessions/route.js') },
        { path: 'waiting', lazy: () => import('../features/waiting/route.js') },
        // The inbox's address before it held every kind of waiting run.
        { path: 'approvals', element: <Navigate to="/waiting" replace /> },
        { path: 'traces/*', lazy: () => import('../features/traces/route.js') },
        { path: 'prompts/*', lazy: () => import('../features/prompts/route.js') },
        { path: 'evals/*', lazy: () => import('../features/evals/route.js') },
        { path: 'config/*', lazy: () => import('../features/config/route.js') },
        { path: 'usage', lazy: () => import('../features/usage/route.js') },
        // Users mode's pages: one's API tokens; the organisation's users and audit log (its admins).
        { path: 'tokens', lazy: () => import('../features/tokens/route.js') },
        { path: 'users', lazy: () => import('../features/users/route.js') },
        { path: 'audit', lazy: () => import('../features/audit/route.js') },
        // Where the identity provider's callback sends a failed sign-in (?error=); signed in, the app.
        { path: 'login', element: <Navigate to="/" replace /> },
        { path: '*', element: <RouteError notFound /> },
      ],
    },
  ],
  { basename: '/console' },
);
