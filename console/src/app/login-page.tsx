import {
  Alert,
  Button,
  Center,
  Divider,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation } from 'react-router';
import type { AuthConfig, LoginBody, SetupBody } from '../api/types.js';
import { ErrorAlert } from '../components/error-alert.js';

/** The console's address now, for the identity provider to send the user back to (its own `?error` left out). */
function consolePath(pathname: string, search: string): string {
  const params = new URLSearchParams(search);
  params.delete('error');
  const query = params.toString();
  const path = pathname.replace(/^\/login\/?$/, '/');
  return `/console${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
}

function SetupForm({ onSetup }: { onSetup: (v: SetupBody) => Promise<unknown> }) {
  const [setupToken, setSetupToken] = useState('');
  const [userName, setUserName] = useState('');
  const [password, setPassword] = useState('');
  const setup = useMutation({ mutationFn: onSetup });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setup.mutate({ setup_token: setupToken.trim(), user_name: userName.trim(), password });
  };
  return (
    <form onSubmit={submit} aria-label="Create the first owner">
      <Stack>
        <Text size="sm">
          No one can sign in yet. Enter the setup token the server printed when it started, and the user name
          and password of the organisation&apos;s first owner.
        </Text>
        <PasswordInput
          label="Setup token"
          value={setupToken}
          onChange={(e) => setSetupToken(e.currentTarget.value)}
          required
        />
        <TextInput
          label="User name"
          value={userName}
          onChange={(e) => setUserName(e.currentTarget.value)}
          autoComplete="username"
          required
        />
        <PasswordInput
          label="Password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          autoComplete="new-password"
          required
        />
        <ErrorAlert error={setup.error} />
        <Button type="submit" loading={setup.isPending}>
          Create owner and sign in
        </Button>
      </Stack>
    </form>
  );
}

function PasswordForm({ onLogin }: { onLogin: (v: LoginBody) => Promise<unknown> }) {
  const [userName, setUserName] = useState('');
  const [password, setPassword] = useState('');
  const login = useMutation({ mutationFn: onLogin });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate({ user_name: userName.trim(), password });
  };
  return (
    <form onSubmit={submit} aria-label="Sign in with a password">
      <Stack>
        <TextInput
          label="User name"
          value={userName}
          onChange={(e) => setUserName(e.currentTarget.value)}
          autoComplete="username"
          data-autofocus
          required
        />
        <PasswordInput
          label="Password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          autoComplete="current-password"
          required
        />
        <ErrorAlert error={login.error} />
        <Button type="submit" loading={login.isPending}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}

/**
 * Users mode's sign-in: the identity provider's button (it sends the user back
 * to the address they opened), the password form, or, before anyone can sign
 * in, the form that creates the first owner with the setup token. An
 * `?error=` the identity provider's callback left in the address is shown.
 */
export function LoginPage({
  config,
  onLogin,
  onSetup,
}: {
  config: AuthConfig;
  onLogin: (v: LoginBody) => Promise<unknown>;
  onSetup: (v: SetupBody) => Promise<unknown>;
}) {
  const { pathname, search } = useLocation();
  const error = new URLSearchParams(search).get('error');
  const returnTo = consolePath(pathname, search);
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={400} component="main">
        <Stack>
          <Title order={3}>Sign in to agent-server</Title>
          {error && (
            <Alert color="red" title="Sign-in failed">
              {error}
            </Alert>
          )}
          {config.setup_required ? (
            <SetupForm onSetup={onSetup} />
          ) : (
            <>
              {config.sso && (
                <Button
                  component="a"
                  href={`${config.sso.login_url}?return_to=${encodeURIComponent(returnTo)}`}
                  variant="default"
                >
                  {config.sso.button_label}
                </Button>
              )}
              {config.sso && config.password_login && <Divider label="or" labelPosition="center" />}
              {config.password_login && <PasswordForm onLogin={onLogin} />}
              {!config.sso && !config.password_login && (
                <Text size="sm">
                  This server offers no way to sign in from the console: ask its administrator.
                </Text>
              )}
            </>
          )}
        </Stack>
      </Paper>
    </Center>
  );
}
