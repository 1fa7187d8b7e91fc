import type { Run } from '../../api/types.js';
import { AuthorizationNeeded } from './authorization-needed.js';
import { InputQuestion, questionKey } from './input-question.js';
import { WaitCard, headOfRun } from './wait-card.js';

/** A run whose tool call waits for an MCP server's OAuth authorization. */
export function AuthorizationCard({ run }: { run: Run }) {
  const head = headOfRun(run, 'the call fails');
  return (
    <WaitCard label={`Authorization for run ${head.runId}`} reason="authorization" colour="cyan" head={head}>
      {run.pause && <AuthorizationNeeded pause={run.pause} />}
    </WaitCard>
  );
}

/** A run whose tool call waits for a person's answer to the MCP server's question. */
export function InputCard({ run }: { run: Run }) {
  const head = headOfRun(run, 'the question is declined');
  return (
    <WaitCard label={`Input for run ${head.runId}`} reason="input" colour="teal" head={head}>
      {/* Keyed by the question, so a second question of the same call starts with a fresh form. */}
      {run.pause && <InputQuestion key={questionKey(run.pause)} runId={head.runId} pause={run.pause} />}
    </WaitCard>
  );
}
