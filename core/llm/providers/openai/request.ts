import type { ContentPart, LlmMessage, LlmRequest } from '../../types.js';

type OpenAiPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

function toParts(parts: ContentPart[]): string | OpenAiPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => p.text).join('');
  return parts.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : {
          type: 'image_url',
          image_url: {
            url:
              p.source.kind === 'url' ? p.source.url : `data:${p.source.media_type};base64,${p.source.data}`,
          },
        },
  );
}

function toMessage(m: LlmMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  if (m.role === 'user') return { role: 'user', content: toParts(m.content) };
  const text = m.content.length > 0 ? toParts(m.content) : null;
  const out: Record<string, unknown> = { role: 'assistant', content: text === '' ? null : text };
  if (m.tool_calls?.length) {
    out.tool_calls = m.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return out;
}

/** Internal → Chat Completions body. */
export function toOpenAiRequest(req: LlmRequest, stream: boolean): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  if (req.system) messages.push({ role: 'system', content: req.system });
  for (const text of req.extra_system ?? []) messages.push({ role: 'system', content: text });
  messages.push(...req.messages.map(toMessage));
  const body: Record<string, unknown> = { model: req.model, messages };
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  if (req.tool_choice !== undefined) {
    body.tool_choice =
      typeof req.tool_choice === 'string'
        ? req.tool_choice
        : { type: 'function', function: { name: req.tool_choice.name } };
  }
  if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: rf.name, schema: rf.schema, strict: rf.strict },
    };
  } else if (rf) body.response_format = { type: rf.type };
  if (req.stop?.length) body.stop = req.stop;
  if (req.max_tokens !== undefined) body.max_completion_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
