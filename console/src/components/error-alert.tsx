import { Alert } from '@mantine/core';
import { ApiError } from '../api/client.js';

/** An API error as the API said it (message, and the fields it named). */
export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
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
