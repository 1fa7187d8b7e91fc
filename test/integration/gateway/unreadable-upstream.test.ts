/**
 * A vendor that answers with something unreadable (a JSON body cut off, a
 * stream event that is not JSON) is a bad gateway on every surface, from
 * every provider type, whether the body is translated or passed through as
 * received: an HTTP 502 in the surface's own error shape when nothing was
 * sent yet, otherwise the surface's own in-stream error event; never a
 * server error ("internal").
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FORMATS, startHarness, type Format, type Harness } from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

type Surface = Format | 'responses';
const SURFACES: Surface[] = [...FORMATS, 'responses'];

function send(surface: Surface, model: string, stream: boolean): Promise<Response> {
  if (surface !== 'responses') return chatRequest(h.api, surface, model, { secret: h.secret, stream });
  return fetch(`${h.api.url}/api/gateway/openai/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.secret}` },
    body: JSON.stringify({ model, input: 'hi', stream }),
  });
}

/** The SSE events of a finished stream: their `event:` names and parsed data. */
function events(text: string): Array<{ event?: string; data: Record<string, unknown> }> {
  return text
    .trim()
    .split(/\n\n/)
    .filter((block) => /^data: /m.test(block))
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, data };
    });
}

/** The stream's closing error event, in the surface's own form; returns its message. */
function streamError(surface: Surface, text: string): string {
  const last = events(text).at(-1)!;
  if (surface === 'anthropic') {
    expect(last.event).toBe('error');
    return expectShape('anthropic', last.data);
  }
  if (surface === 'responses') {
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ type: 'error', code: 'server_error' });
    return String(last.data.message);
  }
  return expectShape(surface, last.data);
}

describe.each(SURFACES)('the %s surface', (surface) => {
  describe.each(FORMATS)('from a %s provider', (provider) => {
    const model = () => `${h.providers[provider].name}/m`;
    const passedThrough = surface === provider;

    it(`answers an unreadable body with a 502 in its own error shape${passedThrough ? ' (same format)' : ''}`, async () => {
      h.vendors[provider].script({ unreadable: { after: 0 } });
      const res = await send(surface, model(), false);
      expect(res.status).toBe(502);
      const message = expectShape(surface === 'responses' ? 'openai' : surface, await res.json());
      expect(message).toContain(h.providers[provider].name);
      expect(message).toMatch(/unreadable/);
      expect(message).not.toMatch(/internal/i);
    });

    it.each([0, 3])(
      `ends a stream whose event %i is unreadable with its own error event${passedThrough ? ' (same format)' : ''}`,
      async (after) => {
        h.vendors[provider].script({ unreadable: { after }, reply: { text: 'one two three four five' } });
        const res = await send(surface, model(), true);
        expect(res.status).toBe(200);
        const text = await res.text();
        const message = streamError(surface, text);
        expect(message).toContain(h.providers[provider].name);
        expect(message).toMatch(/unreadable stream event/);
        expect(message).not.toMatch(/internal/i);
        if (after > 0) expect(text).toMatch(/one/);
      },
    );
  });
});
