/**
 * Evals over the real stack: the API, an in-process worker, the Temporal dev
 * server and the scripted OpenAI vendor, which answers from the request (the
 * replays of several conversations may run at once): the agent's answer to a
 * message is `answer: <message>` under prompt v1 and `changed: <message>`
 * under a prompt mentioning "v2"; the judge scores 0.9 an answer equal to
 * its reference and 0.2 any other.
 */
import { expect } from 'vitest';
import type { Script } from '../../fixtures/vendors/scripted-server.js';
import type { Fixture } from '../sessions/session-harness.js';
import { waitFor } from '../sessions/session-harness.js';

export const EVALS = '/api/agent-server/evals';

export interface EvalData {
  id: string;
  status: string;
  progress: { turns_total: number | null; turns_done: number };
  totals: Array<Record<string, unknown> & { variant: string }>;
  passed: boolean | null;
  error: { code: string; message: string } | null;
}

export interface ResultData {
  variant: string;
  case_index: number;
  turn_index: number;
  case_key: string;
  status: string;
  input: unknown;
  expected: unknown;
  original: { run_id: string; output: string | null } | null;
  run_id: string | null;
  conversation_id: string;
  output: string | null;
  exact_match: boolean | null;
  judge_score: number | null;
  judge_reason: string | null;
  error: { code: string; message: string } | null;
}

type Message = { role: string; content: unknown };

const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p: { text?: string }) => p.text ?? '').join('')
      : '';

/** The last user message of a chat request. */
export function lastUser(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Message[];
  return text([...messages].reverse().find((m) => m.role === 'user')?.content);
}

/** The scripted model as the harness describes it. */
export function answering(body: Record<string, unknown>): Script | undefined {
  const messages = (body.messages ?? []) as Message[];
  const system = text(messages.find((m) => m.role === 'system')?.content);
  const user = lastUser(body);
  if (JSON.stringify(body.response_format ?? '').includes('judgement')) {
    const reference = /Reference answer:\n([\s\S]*?)\n\nCandidate answer:/.exec(user)?.[1];
    const candidate = /Candidate answer:\n([\s\S]*?)\n\nScore/.exec(user)?.[1];
    const score = reference === candidate ? 0.9 : 0.2;
    return {
      reply: { text: JSON.stringify({ score, reason: `scored ${score}` }), usage: { input: 7, output: 3 } },
    };
  }
  const answer = system.includes('v2') ? `changed: ${user}` : `answer: ${user}`;
  return { reply: { text: answer, usage: { input: 10, output: 4 } } };
}

/** Records a conversation of the agent: one turn per message. */
export async function record(fx: Fixture, agentId: string, conversationId: string, messages: string[]) {
  for (const message of messages) {
    const res = await fx.converse({ agent_id: agentId, conversation_id: conversationId, message });
    expect(res.body.data.status, res.text).toBe('completed');
  }
}

export async function startEval(fx: Fixture, body: Record<string, unknown>): Promise<EvalData> {
  const res = await fx.api.request<EvalData>('POST', `${EVALS}?project_id=${fx.projectId}`, body);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

export async function getEval(fx: Fixture, id: string): Promise<EvalData> {
  return (await fx.api.request<EvalData>('GET', `${EVALS}/${id}`)).body.data;
}

export async function untilEnded(fx: Fixture, id: string, timeoutMs = 60_000): Promise<EvalData> {
  return waitFor(
    async () => {
      const ev = await getEval(fx, id);
      return ['completed', 'failed', 'cancelled'].includes(ev.status) ? ev : undefined;
    },
    timeoutMs,
    `eval ${id} to end`,
  );
}

export async function resultsOf(fx: Fixture, id: string): Promise<ResultData[]> {
  const res = await fx.api.request<ResultData[]>('GET', `${EVALS}/${id}/results`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** A new version of the agent's prompt, mentioning "v2" (which the scripted model answers differently). */
export async function addPromptVersion(fx: Fixture, promptName: string): Promise<void> {
  const res = await fx.api.request(
    'POST',
    `/api/agent-server/prompts/${promptName}/versions?project_id=${fx.projectId}`,
    { template: 'You are {{role}}, v2.', commit_message: 'v2' },
  );
  expect(res.status, res.text).toBe(200);
}
