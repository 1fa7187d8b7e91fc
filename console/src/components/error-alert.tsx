import { Alert, Button, Stack } from '@mantine/core';
import { Link } from 'react-router';
import { ApiError } from '../api/client.js';

/**
 * Whether the API said the thing an address names does not exist: a 404, or
 * a 400 about the id itself (an address with a malformed id names nothing).
 */
export function namesNothing(error: unknown, idField: string): boolean {
  if (!(error instanceof ApiError)) return false;
  if (error.status === 404) return true;
  return (
    error.status === 400 && error.fields.some((f) => f.field === idField || f.field.endsWith(`.${idField}`))
  );
}

/**
 * An API error as the API said it (message, and the fields it named). Given
 * `missing`, an error saying the addressed thing does not exist reads
 * "No such agent" with a way back, instead of the API's words about ids.
 */
export function ErrorAlert({
  error,
  missing,
}: {
  error: unknown;
  missing?: { what: string; idField: string; back: { to: string; label: string } };
}) {
  if (!error) return null;
  if (missing && namesNothing(error, missing.idField))
    return (
      <Stack maw={640}>
        <Alert color="gray" title={`No such ${missing.what}`} role="alert">
          The address names no {missing.what} of this project: it may have been deleted, or the link is
          mistyped.
        </Alert>
        <Button component={Link} to={missing.back.to} variant="light" w="fit-content">
          {missing.back.label}
        </Button>
      </Stack>
    );
  const message = error instanceof Error ? error.message : JSON.stringify(error);
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <Alert color="red" title={message} role="alert">
      {fields.map((f) => (
        <div key={f.field}>
          <code>{f.field}</code>: {f.message}
        </div>
      ))}
    </Alert>
  );
}
