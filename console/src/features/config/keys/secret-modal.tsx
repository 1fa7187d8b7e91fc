import { Code, Text } from '@mantine/core';
import { SecretOnce } from '../../../components/secret-once.js';

/** A virtual key's secret, shown exactly once (after create or rotate): the API stores only its hash. */
export function SecretModal({
  secret,
  name,
  onClose,
}: {
  secret: string | null;
  name: string;
  onClose: () => void;
}) {
  return (
    <SecretOnce
      secret={secret}
      title={`Secret of ${name}`}
      testId="virtual-key-secret"
      warning="The server keeps only a hash; if you lose it, rotate the key."
      onClose={onClose}
    >
      <Text size="sm" c="dimmed">
        Use it where the vendor SDK takes its API key, with the gateway as base URL (for OpenAI:{' '}
        <Code>{`${location.origin}/api/gateway/openai/v1`}</Code>).
      </Text>
    </SecretOnce>
  );
}
