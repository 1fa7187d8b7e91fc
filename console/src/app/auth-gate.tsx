import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSyncExternalStore, type ReactNode } from 'react';
import { authApi } from '../api/auth.js';
import type { AuthConfig } from '../api/types.js';
import { ApiError } from '../api/client.js';
import { endSession, onSessionChange, sessionEnded, setAuthMode, startSession } from '../api/session.js';
import { ErrorAlert } from '../components/error-alert.js';
import { Loading } from '../components/loading.js';
import { AuthContext } from './auth.js';
import { LoginPage } from './login-page.js';
import { TokenGate } from './token-gate.js';

const OPEN: AuthConfig = { mode: 'open', setup_required: false, password_login: false, sso: null };

/** The server's mode, asked once. A server that does not answer it has no users mode: open, as before. */
function useAuthConfig() {
  return useQuery({
    queryKey: ['auth', 'config'],
    staleTime: Infinity,
    retry: false,
    queryFn: async () => {
      const config = await authApi.config().catch(() => OPEN);
      setAuthMode(config.mode);
      return config;
    },
  });
}

/**
 * What the console shows before its pages. Open mode: the pages, with the
 * ADMIN_TOKEN prompt as before. Users mode: the pages once a session exists
 * (the header shows whose), else the login page; a 401 from any later call
 * (the session expired, the user was deactivated) brings the login page back.
 */
export function AuthGate({ children }: { children: ReactNode }) {
  const config = useAuthConfig();
  const mode = config.data ?? OPEN;
  const users = mode.mode === 'users';
  const ended = useSyncExternalStore(onSessionChange, sessionEnded);
  const client = useQueryClient();
  const session = useQuery({
    queryKey: ['auth', 'session'],
    enabled: users,
    retry: false,
    staleTime: 60_000,
    queryFn: async () => {
      try {
        const s = await authApi.session();
        startSession(s.csrf_token ?? '');
        return s;
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) endSession();
        throw e;
      }
    },
  });

  if (config.isPending) return <Loading what="Loading the console" />;
  if (!users)
    return (
      <AuthContext.Provider value={{ mode: 'open' }}>
        <TokenGate>{children}</TokenGate>
      </AuthContext.Provider>
    );
  if (ended) {
    // What the previous user's pages read is not the next one's to see.
    const signIn = async () => {
      client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
      const s = await authApi.session();
      // A read of the session begun before signing in would answer 401 over this one.
      await client.cancelQueries({ queryKey: ['auth', 'session'] });
      client.setQueryData(['auth', 'session'], s);
      startSession(s.csrf_token ?? '');
    };
    return (
      <LoginPage
        config={mode}
        onLogin={async (v) => {
          await authApi.login(v);
          await signIn();
        }}
        onSetup={async (v) => {
          await authApi.setup(v);
          await client.invalidateQueries({ queryKey: ['auth', 'config'] });
          // Setup signs the new owner in; a server that did not is asked to.
          await signIn().catch(async (e: unknown) => {
            if (!(e instanceof ApiError && e.status === 401)) throw e;
            await authApi.login({ user_name: v.user_name, password: v.password });
            await signIn();
          });
        }}
      />
    );
  }
  if (session.error) return <ErrorAlert error={session.error} />;
  if (!session.data) return <Loading what="Loading the console" />;
  return (
    <AuthContext.Provider value={{ mode: 'users', config: mode, session: session.data }}>
      {children}
    </AuthContext.Provider>
  );
}
