import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FORMATS, startHarness, type Format, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const TERMINATOR: Record<Format, RegExp> = {
  openai: /data: \[DONE\]/,
  anthropic: /event: message_stop/,
  gemini: /"finishReason"/,
};

/** Reads the response body until `until` matches what has arrived, or fails after `ms`. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  until: RegExp,
  ms = 5000,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  while (!until.test(text)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`nothing matching ${String(until)} within ${ms} ms; got: ${text}`);
    const next = await Promise.race([
      reader.read(),
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), left)),
    ]);
    if (next === 'timeout') continue;
    if (next.done) break;
    text += decoder.decode(next.value, { stream: true });
  }
  return text;
}

async function readAll(res: Response): Promise<string> {
  return res.text();
}

describe.each(FORMATS)('%s surface', (surface) => {
  describe.each(FORMATS)('from a %s provider', (provider) => {
    const model = () => `${h.providers[provider].name}/m`;

    it('forwards the first delta while the upstream still holds back the rest', async () => {
      h.vendors[provider].script({ hold: true, reply: { text: 'first second third' } });
      const res = await chatRequest(h.api, surface, model(), { secret: h.secret, stream: true });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      // The vendor sends nothing more until release(): a buffering gateway never gets here.
      const head = await readUntil(reader, /first/);
      expect(head).not.toMatch(TERMINATOR[surface]);
      h.vendors[provider].release();
      const rest = await readUntil(reader, TERMINATOR[surface]);
      expect(head + rest).toMatch(/third/);
    });

    it('a stream cut halfway ends with an error event naming the provider and no success terminator', async () => {
      h.vendors[provider].script({ cutAfter: 3, reply: { text: 'one two three four five six' } });
      const res = await chatRequest(h.api, surface, model(), { secret: h.secret, stream: true });
      expect(res.status).toBe(200);
      const text = await readAll(res);
      expect(text).not.toMatch(TERMINATOR[surface]);
      const events = text.trim().split(/\n\n/);
      const last = JSON.parse(
        events[events.length - 1]!.replace(/^event: \w+\n/, '').replace(/^data: /, ''),
      ) as Record<string, unknown>;
      if (surface === 'anthropic')
        expect(last).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      else expect(last).toMatchObject({ error: { message: expect.any(String) as unknown } });
      expect(JSON.stringify(last)).toContain(h.providers[provider].name);
    });
  });

  it('a client that goes away aborts the upstream request', async () => {
    const provider: Format = surface === 'openai' ? 'anthropic' : 'openai';
    h.vendors[provider].script({ hold: true, reply: { text: 'first second third' } });
    const controller = new AbortController();
    const res = await chatRequest(h.api, surface, `${h.providers[provider].name}/m`, {
      secret: h.secret,
      stream: true,
      signal: controller.signal,
    });
    await readUntil(res.body!.getReader(), /first/);
    controller.abort();
    await expect.poll(() => h.vendors[provider].aborted, { timeout: 5000 }).toBe(1);
  });

  it('a client that leaves a non-streaming call aborts the upstream request too', async () => {
    h.vendors[surface].script({ firstByteDelayMs: 3000 });
    const controller = new AbortController();
    const pending = chatRequest(h.api, surface, `${h.providers[surface].name}/m`, {
      secret: h.secret,
      signal: controller.signal,
    }).catch(() => 'aborted');
    await expect.poll(() => h.vendors[surface].received.length).toBe(1);
    controller.abort();
    expect(await pending).toBe('aborted');
    await expect.poll(() => h.vendors[surface].aborted, { timeout: 2000 }).toBe(1);
  });

  it('a slow first byte upstream is waited for, then streamed', async () => {
    h.vendors[surface].script({ firstByteDelayMs: 300, reply: { text: 'late but fine' } });
    const res = await chatRequest(h.api, surface, `${h.providers[surface].name}/m`, {
      secret: h.secret,
      stream: true,
    });
    const text = await readAll(res);
    expect(text).toMatch(/fine/);
    expect(text).toMatch(TERMINATOR[surface]);
  });
});
