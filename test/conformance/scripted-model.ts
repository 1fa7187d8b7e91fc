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
  const offered = tools.filter((t) => typeof t.function?.name === 'string');
  const suggested = suggestedArguments(messages);
  const calls = offered.map((t) => ({
    name: t.function!.name!,
    arguments:
      echoedSchema(t.function!.name!, offered) ??
      suggestedFor(t.function!.name!, suggested) ??
      argumentsFor(t.function!.parameters),
  }));
  if (toolsAnswered || calls.length === 0)
    return { reply: { text: FINAL_ANSWER, usage: { input: 10, output: 4 } } };
  return { reply: { tool_calls: calls, usage: { input: 10, output: 6 } } };
}

/**
 * The json-schema-2020-12-preservation scenario asks the client to send the
 * input schema it holds for `json_schema_2020_12_tool` back through
 * `json_schema_echo`: the model echoes the schema it was offered, so the
 * scenario sees what survived the platform's way to the model.
 */
function echoedSchema(name: string, offered: ChatTool[]): Record<string, unknown> | undefined {
  if (!name.endsWith('json_schema_echo')) return undefined;
  const focal = offered.find((t) => t.function?.name?.endsWith('json_schema_2020_12_tool'));
  return focal ? { schema: focal.function?.parameters ?? {} } : undefined;
}

type Suggested = Array<{ name: string; arguments: Record<string, unknown> }>;

/** The arguments the person's message names per tool (a ```json block with `toolCalls`), if any. */
function suggestedArguments(messages: Array<{ role?: string; content?: unknown }>): Suggested {
  const said = messages.find((m) => m.role === 'user')?.content;
  const text = typeof said === 'string' ? said : JSON.stringify(said ?? '');
  const block = /```json\n([\s\S]*?)\n```/.exec(text)?.[1];
  if (!block) return [];
  try {
    const parsed = JSON.parse(block) as { toolCalls?: Suggested };
    return Array.isArray(parsed.toolCalls) ? parsed.toolCalls : [];
  } catch {
    return [];
  }
}

/** The suggested arguments of an offered tool, by its own name (offered names may carry a server prefix). */
function suggestedFor(offeredName: string, suggested: Suggested): Record<string, unknown> | undefined {
  return suggested.find((c) => offeredName === c.name || offeredName.endsWith(`__${c.name}`))?.arguments;
}
