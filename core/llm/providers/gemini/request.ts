import { InvalidLlmRequestError, UnsupportedFeatureError } from '../../errors.js';
import type { ContentPart, LlmRequest } from '../../types.js';

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/** Gemini wants a MIME type for a URL image; guess it from the extension. */
function mimeFromUrl(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  const known: Record<string, string> = { png: 'image/png', gif: 'image/gif', webp: 'image/webp' };
  return (ext && known[ext]) ?? 'image/jpeg';
}

function toPart(p: ContentPart): Part {
  if (p.type === 'text') return { text: p.text };
  return p.source.kind === 'url'
    ? { fileData: { mimeType: mimeFromUrl(p.source.url), fileUri: p.source.url } }
    : { inlineData: { mimeType: p.source.media_type, data: p.source.data } };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    return { result: value };
  } catch {
    return { result: text };
  }
}

/**
 * Internal → generateContent body. Gemini answers function results by name,
 * not by call id, so each result's name is looked up from the call it answers.
 */
export function toGeminiRequest(req: LlmRequest): Record<string, unknown> {
  const contents: Content[] = [];
  const push = (role: Content['role'], parts: Part[]) => {
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  const callNames = new Map<string, string>();
  for (const m of req.messages) {
    if (m.role === 'user') push('user', m.content.map(toPart));
    else if (m.role === 'assistant') {
      const parts = m.content.filter((p) => p.type !== 'text' || p.text !== '').map(toPart);
      for (const c of m.tool_calls ?? []) {
        callNames.set(c.id, c.name);
        parts.push({ functionCall: { name: c.name, args: parseObject(c.arguments || '{}') } });
      }
      push('model', parts);
    } else {
      const name = m.name ?? callNames.get(m.tool_call_id);
      if (!name)
        throw new InvalidLlmRequestError(`tool result ${m.tool_call_id} answers no earlier tool call`);
      push('user', [{ functionResponse: { name, response: parseObject(m.content) } }]);
    }
  }
  const body: Record<string, unknown> = { contents };
  const system = [req.system, ...(req.extra_system ?? [])].filter((t): t is string => Boolean(t));
  if (system.length) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (req.tools?.length) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parametersJsonSchema: t.parameters,
        })),
      },
    ];
  }
  const tc = req.tool_choice;
  if (tc !== undefined) {
    const mode = tc === 'auto' ? 'AUTO' : tc === 'none' ? 'NONE' : 'ANY';
    body.toolConfig = {
      functionCallingConfig: { mode, ...(typeof tc === 'object' ? { allowedFunctionNames: [tc.name] } : {}) },
    };
  }
  if (req.parallel_tool_calls === false)
    throw new UnsupportedFeatureError('parallel_tool_calls: false', 'gemini');
  const gen: Record<string, unknown> = {};
  if (req.stop?.length) gen.stopSequences = req.stop;
  if (req.max_tokens !== undefined) gen.maxOutputTokens = req.max_tokens;
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.top_p !== undefined) gen.topP = req.top_p;
  const rf = req.response_format;
  if (rf && rf.type !== 'text') gen.responseMimeType = 'application/json';
  if (rf?.type === 'json_schema') gen.responseJsonSchema = rf.schema;
  if (Object.keys(gen).length > 0) body.generationConfig = gen;
  return body;
}
