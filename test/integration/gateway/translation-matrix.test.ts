import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Received } from '../../fixtures/vendors/scripted-server.js';
import { FORMATS, startHarness, type Format, type Harness } from './gateway-harness.js';
import { driverFor, SURFACE_NAMES } from './surface-drivers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const TWO_CALLS = {
  reply: {
    tool_calls: [
      { name: 'weather', arguments: { city: 'Paris' } },
      { name: 'weather', arguments: { city: 'Rome' } },
    ],
  },
};

/** The tool results as the vendor received them, in its own format, as [id-or-name, content]. */
function toolResults(provider: Format, body: Received['body']): unknown[] {
  if (provider === 'openai')
    return (body.messages as Array<{ role: string; content: string }>)
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content) as unknown);
  if (provider === 'anthropic') {
    const blocks = (
      body.messages as Array<{ content: Array<{ type: string; content?: string }> | string }>
    ).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    return blocks.filter((b) => b.type === 'tool_result').map((b) => JSON.parse(b.content!) as unknown);
  }
  const parts = (
    body.contents as Array<{ parts: Array<{ functionResponse?: { response: unknown } }> }>
  ).flatMap((c) => c.parts);
  return parts.filter((p) => p.functionResponse).map((p) => p.functionResponse!.response);
}

function systemPrompt(provider: Format, body: Received['body']): string | undefined {
  if (provider === 'openai')
    return (body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')
      ?.content;
  if (provider === 'anthropic') return body.system as string;
  return (body.systemInstruction as { parts: Array<{ text: string }> } | undefined)?.parts[0]?.text;
}

describe.each(SURFACE_NAMES)('%s surface', (surface) => {
  describe.each(FORMATS)('to a %s provider', (provider) => {
    const model = () => `${h.providers[provider].name}/model-x`;
    const vendor = () => h.vendors[provider];
    const driver = () => driverFor(surface, h.api, h.secret);

    it('plain text: system prompt and answer cross over; the provider key and headers reach the vendor', async () => {
      expect(await driver().text(model())).toBe('Hello from the scripted vendor');
      const got = vendor().received[0]!;
      expect(systemPrompt(provider, got.body)).toBe('Be brief.');
      expect(JSON.stringify(got.headers)).toContain(`hdr-${provider}`);
      expect(JSON.stringify(got.headers)).not.toContain(h.secret);
    });

    it('a turn with two tool calls comes back as two calls with their arguments', async () => {
      vendor().script(TWO_CALLS);
      const calls = await driver().tools(model());
      expect(calls.map((c) => [c.name, c.args])).toEqual([
        ['weather', { city: 'Paris' }],
        ['weather', { city: 'Rome' }],
      ]);
    });

    it('the follow-up carries both tool results, paired the way the vendor requires', async () => {
      vendor().script(TWO_CALLS, { reply: { text: 'Paris 21, Rome 21' } });
      const calls = await driver().tools(model());
      expect(await driver().followUp(model(), calls)).toBe('Paris 21, Rome 21');
      expect(toolResults(provider, vendor().received[1]!.body)).toEqual([
        { city: 'Paris', celsius: 21 },
        { city: 'Rome', celsius: 21 },
      ]);
    });

    it('streams text delta by delta and tool calls whole', async () => {
      vendor().script({ reply: { text: 'one two three four' } }, TWO_CALLS);
      const text = await driver().stream(model());
      expect(text.deltas.join('')).toBe('one two three four');
      expect(text.deltas.length).toBeGreaterThan(1);
      const tools = await driver().stream(model(), true);
      expect(tools.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    });
  });
});
