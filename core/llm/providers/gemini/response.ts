import { randomUUID } from 'node:crypto';
import type { StreamParser } from '../../adapter.js';
import { UpstreamError } from '../../errors.js';
import type { FinishReason, LlmResponse, LlmStreamEvent, ToolCall, Usage } from '../../types.js';
import { usageWithCache } from '../../usage.js';

interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
}
interface GeminiBody {
  responseId?: string;
  modelVersion?: string;
  candidates?: Array<{ content?: { parts?: GeminiPart[] }; finishReason?: string }>;
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    /** Part of promptTokenCount: read from a cache (explicit `cachedContent` or implicit). */
    cachedContentTokenCount?: number;
  };
  error?: { message?: string };
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function finishFromGemini(reason: string | undefined, calledTools: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** Gemini reports no cache writes: creating a cache is its own API call, billed as storage. */
const usageOf = (u: GeminiBody['usageMetadata']): Usage =>
  usageWithCache(
    u?.promptTokenCount ?? 0,
    (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0),
    u?.cachedContentTokenCount ?? 0,
  );

/** Gemini's calls may carry no id; the other formats need one to pair results with calls. */
const callId = (fc: NonNullable<GeminiPart['functionCall']>) =>
  fc.id ?? `call_${randomUUID().replace(/-/g, '')}`;

/** generateContent response → internal. Thought parts are not answer text. */
export function fromGeminiResponse(raw: unknown, model: string): LlmResponse {
  const body = raw as GeminiBody;
  const candidate = body.candidates?.[0];
  const parts = candidate?.content?.parts ?? [];
  const tool_calls: ToolCall[] = parts
    .filter((p) => p.functionCall)
    .map((p) => ({
      id: callId(p.functionCall!),
      name: p.functionCall!.name ?? '',
      arguments: JSON.stringify(p.functionCall!.args ?? {}),
    }));
  return {
    id: body.responseId ?? '',
    model: body.modelVersion ?? model,
    text: parts
      .filter((p) => p.text !== undefined && !p.thought)
      .map((p) => p.text)
      .join(''),
    tool_calls,
    finish_reason: finishFromGemini(candidate?.finishReason, tool_calls.length > 0),
    usage: usageOf(body.usageMetadata),
  };
}

/** Each Gemini chunk is a partial response; function calls arrive whole. Usage is cumulative, so taken at the end. */
export function createGeminiStreamParser(providerName: string, model: string): StreamParser {
  let started = false;
  let tools = 0;
  return ({ data }) => {
    const chunk = JSON.parse(data) as GeminiBody;
    if (chunk.error)
      throw new UpstreamError(502, `${providerName}: ${chunk.error.message ?? 'error'}`, false);
    const out: LlmStreamEvent[] = [];
    if (!started) {
      started = true;
      out.push({ type: 'start', id: chunk.responseId ?? '', model: chunk.modelVersion ?? model });
    }
    const candidate = chunk.candidates?.[0];
    for (const p of candidate?.content?.parts ?? []) {
      if (p.functionCall) {
        const index = tools++;
        out.push({
          type: 'tool_call_start',
          index,
          id: callId(p.functionCall),
          name: p.functionCall.name ?? '',
        });
        out.push({ type: 'tool_call_delta', index, arguments: JSON.stringify(p.functionCall.args ?? {}) });
      } else if (p.text && !p.thought) out.push({ type: 'text', text: p.text });
    }
    if (candidate?.finishReason) {
      out.push({ type: 'finish', finish_reason: finishFromGemini(candidate.finishReason, tools > 0) });
      out.push({ type: 'usage', usage: usageOf(chunk.usageMetadata) });
    }
    return out;
  };
}
