import { Button, Modal, PasswordInput, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, useSyncExternalStore, type ReactNode } from 'react';
import { clearTokenNeeded, onTokenChange, setAdminToken, tokenNeeded } from '../api/token.js';

/**
 * Asks for ADMIN_TOKEN once, when the API first answers 401; a server
 * without a token never asks. The token is sent as a Bearer header.
 */
export function TokenGate({ children }: { children: ReactNode }) {
  const needed = useSyncExternalStore(onTokenChange, tokenNeeded);
  const [value, setValue] = useState('');
  const client = useQueryClient();
  const submit = () => {
    setAdminToken(value.trim());
    clearTokenNeeded();
    setValue('');
    void client.invalidateQueries();
  };
  return (
    <>
      {children}
      <Modal opened={needed} onClose={() => {}} withCloseButton={false} title="Admin token" centered>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <Stack>
            <Text size="sm">
              This server sets ADMIN_TOKEN. Enter it once; this tab keeps it until it closes.
            </Text>
            <PasswordInput
              label="ADMIN_TOKEN"
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              data-autofocus
              required
            />
            <Button type="submit" disabled={!value.trim()}>
              Continue
            </Button>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
