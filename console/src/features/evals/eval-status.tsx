import { Badge } from '@mantine/core';
import { statusColour } from '../sessions/format.js';

/** An eval's status, coloured as a run's is. */
export function EvalStatus({ status }: { status: string | undefined }) {
  return (
    <Badge color={statusColour(status)} variant="light">
      {status ?? 'unknown'}
    </Badge>
  );
}

/** The thresholds' verdict: passed, failed, or nothing to say (no thresholds, or not completed). */
export function Verdict({ passed }: { passed: boolean | null | undefined }) {
  if (passed === null || passed === undefined) return <>—</>;
  return (
    <Badge color={passed ? 'green' : 'red'} variant="filled">
      {passed ? 'passed' : 'failed'}
    </Badge>
  );
}
