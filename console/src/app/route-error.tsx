import { Alert, Button, Stack } from '@mantine/core';
import { Link, useRouteError } from 'react-router';

/** A page that failed to load or render, or an unknown path: says what happened and where to go. */
export function RouteError({ notFound = false }: { notFound?: boolean }) {
  const error = useRouteError() as Error | undefined;
  return (
    <Stack p="xl" maw={640}>
      <Alert color={notFound ? 'gray' : 'red'} title={notFound ? 'No such page' : 'This page failed'}>
        {notFound ? 'The address does not match a page of the console.' : (error?.message ?? String(error))}
      </Alert>
      <Button component={Link} to="/playground" variant="light" w="fit-content">
        Go to the playground
      </Button>
    </Stack>
  );
}
