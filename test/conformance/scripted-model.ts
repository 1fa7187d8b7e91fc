import type { Script } from '../fixtures/vendors/scripted-server.js';
import { argumentsFor } from './tool-arguments.js';

/** What the scripted model says once its tools have answered. */
export const FINAL_ANSWER = 'Every tool was called.';

interface ChatTool {
  type?: string;
  function?: { name?: string; parameters?: unknown };
}

/**
 * The scripted model of a conformance turn, as the OpenAI-format vendor's
 * `respond` hook: to the person's message it answers by calling every tool
 * the platform offers it (arguments from each tool's schema), all in one
 * step; once the tools have answered, it answers with text. It decides from
 * the request alone, so it serves any scenario without a per-scenario script.
 */
export function callEveryOfferedTool(body: Record<string, unknown>): Script {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string }>) : [];
  const tools = Array.isArray(body.tools) ? (body.tools as ChatTool[]) : [];
  const toolsAnswered = messages.at(-1)?.role === 'tool';
  const calls = tools
    .filter((t) => typeof t.function?.name === 'string')
    .map((t) => ({ name: t.function!.name!, arguments: argumentsFor(t.function!.parameters) }));
  if (toolsAnswered || calls.length === 0)
    return { reply: { text: FINAL_ANSWER, usage: { input: 10, output: 4 } } };
  return { reply: { tool_calls: calls, usage: { input: 10, output: 6 } } };
}
