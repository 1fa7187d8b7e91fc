import type { Received } from '../../fixtures/vendors/scripted-server.js';
import type { Format } from './gateway-harness.js';

type Obj = Record<string, unknown>;

/**
 * The conversation a scripted vendor received, in its own format, as
 * comparable lines: `user: …`, `assistant: …`, `call <name> <arguments JSON>`,
 * `result: <content>`; the system prompt separately. Lets a test say what a
 * provider of any type was sent for a Responses request.
 */
export interface VendorView {
  system: string | undefined;
  turns: string[];
}

const json = (v: unknown) => (typeof v === 'string' ? JSON.stringify(JSON.parse(v)) : JSON.stringify(v));
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? (content as Obj[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('')
      : '';

function openai(body: Obj): VendorView {
  const turns: string[] = [];
  let system: string | undefined;
  for (const m of body.messages as Obj[]) {
    if (m.role === 'system') system = textOf(m.content);
    else if (m.role === 'tool') turns.push(`result: ${textOf(m.content)}`);
    else {
      if (textOf(m.content)) turns.push(`${String(m.role)}: ${textOf(m.content)}`);
      for (const c of (m.tool_calls as Array<{ function: Obj }> | undefined) ?? [])
        turns.push(`call ${String(c.function.name)} ${json(c.function.arguments)}`);
    }
  }
  return { system, turns };
}

function anthropic(body: Obj): VendorView {
  const turns: string[] = [];
  for (const m of body.messages as Obj[]) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Obj[]);
    for (const b of blocks) {
      if (b.type === 'text') turns.push(`${String(m.role)}: ${String(b.text)}`);
      else if (b.type === 'tool_use') turns.push(`call ${String(b.name)} ${json(b.input)}`);
      else if (b.type === 'tool_result') turns.push(`result: ${textOf(b.content)}`);
    }
  }
  return { system: textOf(body.system) || undefined, turns };
}

function gemini(body: Obj): VendorView {
  const turns: string[] = [];
  for (const c of body.contents as Obj[]) {
    for (const p of c.parts as Obj[]) {
      const role = c.role === 'model' ? 'assistant' : 'user';
      if (typeof p.text === 'string') turns.push(`${role}: ${p.text}`);
      const call = p.functionCall as Obj | undefined;
      if (call) turns.push(`call ${String(call.name)} ${json(call.args)}`);
      const res = p.functionResponse as Obj | undefined;
      if (res) turns.push(`result: ${json(res.response)}`);
    }
  }
  const sys = body.systemInstruction as { parts: Obj[] } | undefined;
  return { system: sys ? textOf(sys.parts) : undefined, turns };
}

export function vendorView(provider: Format, received: Received): VendorView {
  if (provider === 'openai') return openai(received.body);
  if (provider === 'anthropic') return anthropic(received.body);
  return gemini(received.body);
}
