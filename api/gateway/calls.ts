import { buildCall } from '../../core/llm/adapter.js';
import { complete, embed, openStream, openVendorStream } from '../../core/llm/client.js';
import { UnsupportedFeatureError } from '../../core/llm/errors.js';
import { postUpstream } from '../../core/llm/http.js';
import { geminiModelUrl } from '../../core/llm/providers/gemini/api.js';
import { ADAPTERS } from '../../core/llm/providers/index.js';
import type { ProviderTarget, Usage } from '../../core/llm/types.js';
import type { Surface } from './surface.js';

type Obj = Record<string, unknown>;

/** One attempt of a caller's request: its surface and body, and the provider and model it goes to. */
export interface UpstreamAsk {
  surface: Surface;
  target: ProviderTarget;
  model: string;
  body: Obj;
  signal: AbortSignal;
}

/** One upstream call's answer in the caller's format, and the usage it reported. */
export interface JsonAnswer {
  body: unknown;
  usage?: Usage;
}

/** An opened upstream stream: SSE text in the caller's format, produced as upstream events arrive. */
export interface OpenedStream {
  chunks: AsyncGenerator<string>;
  /**
   * True from the chunk that carries the answer's end (finish reason, usage,
   * the closing event) on: the writer holds those until the usage row is written.
   */
  finished(): boolean;
  usage(): Usage | undefined;
}

/** Same format: the body goes as received (unknown fields and tool types included), only `model` is replaced. */
function passthroughBody(surface: Surface, body: Obj, model: string): Obj {
  return surface.format === 'gemini' ? body : { ...body, model };
}

/** Whether a chat body goes to this provider as received (same format, and a body of that provider's API). */
const passesThrough = (surface: Surface, target: ProviderTarget) =>
  surface.format === target.type && !surface.alwaysTranslate;

/** A chat body for a same-format provider: the surface's own extensions removed (see Surface.sameFormatChatBody). */
function passthroughChatBody(surface: Surface, body: Obj, model: string): Obj {
  return passthroughBody(surface, surface.sameFormatChatBody?.(body) ?? body, model);
}

export async function chatJson({ surface, target, model, body, signal }: UpstreamAsk): Promise<JsonAnswer> {
  const adapter = ADAPTERS[target.type];
  if (passesThrough(surface, target)) {
    const call = buildCall(adapter, target, model, 'chat', passthroughChatBody(surface, body, model));
    const answer: unknown = await (await postUpstream(target, call, signal)).json();
    return { body: answer, usage: adapter.fromVendorResponse(answer, model).usage };
  }
  const res = await complete(target, surface.parseRequest(body, model, target.type), signal);
  return { body: surface.renderResponse(res), usage: res.usage };
}

/**
 * Opens the upstream stream; throws (retryably or not) before any byte is
 * sent to the caller. Same-format streams are forwarded event by event as
 * received; others are translated event by event.
 */
export async function chatStream({
  surface,
  target,
  model,
  body,
  signal,
}: UpstreamAsk): Promise<OpenedStream> {
  let usage: Usage | undefined;
  if (passesThrough(surface, target)) {
    const adapter = ADAPTERS[target.type];
    const call = buildCall(adapter, target, model, 'stream', passthroughChatBody(surface, body, model));
    const events = await openVendorStream(target, call, model, signal);
    let finished = false;
    // Each event goes as received; what it says only marks the answer's end and usage.
    const chunks = async function* () {
      for await (const ev of events) {
        for (const p of ev.parsed) {
          if (p.type === 'finish') finished = true;
          if (p.type === 'usage') usage = p.usage;
        }
        yield `${ev.event ? `event: ${ev.event}\n` : ''}data: ${ev.data}\n\n`;
      }
    };
    return { chunks: chunks(), usage: () => usage, finished: () => finished };
  }
  const events = await openStream(target, surface.parseRequest(body, model, target.type), signal);
  const render = surface.createStreamRenderer(body);
  let finished = false;
  const chunks = async function* () {
    for await (const ev of events) {
      if (ev.type === 'usage') usage = ev.usage;
      if (ev.type === 'finish') finished = true;
      const text = render.event(ev);
      if (text) yield text;
    }
    finished = true;
    yield render.end();
  };
  return { chunks: chunks(), usage: () => usage, finished: () => finished };
}

/** Gemini to Gemini keeps the caller's method; a batch names the model in each request too. */
function geminiEmbedCall(target: ProviderTarget, model: string, body: Obj) {
  const batch = Array.isArray(body.requests);
  const sent = batch
    ? { ...body, requests: (body.requests as Obj[]).map((r) => ({ ...r, model: `models/${model}` })) }
    : body;
  const url = geminiModelUrl(target, model, batch ? ':batchEmbedContents' : ':embedContent');
  return { url, headers: ADAPTERS.gemini.headers(target), body: sent };
}

/** Embeddings; a Gemini caller reaching a Gemini provider keeps its single-input `:embedContent` call. */
export async function embedJson({ surface, target, model, body, signal }: UpstreamAsk): Promise<JsonAnswer> {
  const adapter = ADAPTERS[target.type];
  if (surface.format === target.type && adapter.fromVendorEmbedding) {
    const call =
      target.type === 'gemini'
        ? geminiEmbedCall(target, model, body)
        : buildCall(adapter, target, model, 'embed', passthroughBody(surface, body, model));
    const answer: unknown = await (await postUpstream(target, call, signal)).json();
    return { body: answer, usage: { ...adapter.fromVendorEmbedding(answer, model).usage, output_tokens: 0 } };
  }
  if (!surface.parseEmbedding || !surface.renderEmbedding)
    throw new UnsupportedFeatureError('embeddings', surface.format);
  const res = await embed(target, surface.parseEmbedding(body, model, target.type), signal);
  return { body: surface.renderEmbedding(res, body), usage: { ...res.usage, output_tokens: 0 } };
}
