/**
 * Traces in a real browser against the real stack: the run of a converse call
 * links to its trace, drawn as a waterfall with the API's server span and the
 * model call span; the span panel shows the GenAI attributes, and that the
 * project records no content; the "LLM and tools" view folds queries and
 * HTTP calls; the dark scheme darkens the waterfall; the statistics tables
 * list the converse endpoint and the model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';

interface Trace {
  spans: Array<{ name: string; kind: string; service_name: string }>;
}

describe.skipIf(noTemporal() || noBrowser())('console: traces', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let run: RunView;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
    const agent = await world.agent();
    stack.vendor.script({ reply: { text: 'Traced answer', usage: { input: 12, output: 4 } } });
    run = await world.converse({ agent_id: agent.id, message: 'trace me' });
    expect(run.status).toBe('completed');
    // Spans are written shortly after their work ends: wait for the ones the page must show.
    await poll(async () => {
      const r = await stack.api.request<Trace>('GET', `/api/agent-server/traces/${run.trace_id}`);
      const names = r.status === 200 ? r.body.data.spans.map((s) => s.name) : [];
      return names.includes('POST /api/agent-server/converse') && names.includes('chat gpt-test')
        ? true
        : undefined;
    }, 'the trace spans');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('opens the run’s trace as a waterfall; the span panel shows the model call', async () => {
    const page = await world.open(`/sessions/${run.conversation_id}`);
    await page.locator(`tr[data-run-id="${run.run_id}"]`).getByRole('link', { name: 'Trace' }).click();
    await page.waitForURL(new RegExp(`/console/traces/${run.trace_id}$`));
    const waterfall = page.getByRole('region', { name: 'Trace waterfall' });
    await waterfall.waitFor();
    const server = waterfall.locator('[data-span-name="POST /api/agent-server/converse"]');
    const model = waterfall.locator('[data-span-name="chat gpt-test"]');
    await server.waitFor();
    await model.waitFor();
    // The model call shows model and tokens on its row.
    expect(await model.textContent()).toContain('gpt-test · 12→4');
    // Nested: the model call is indented deeper than the server span.
    const indent = async (row: typeof model) => {
      const style = (await row.locator('> div').first().getAttribute('style')) ?? '';
      return Number(/padding-left:\s*([\d.]+)px/.exec(style)?.[1] ?? 0);
    };
    expect(await indent(model)).toBeGreaterThan(await indent(server));
    // The time axis has ticks.
    expect(await waterfall.locator('[class*="tick"]').count()).toBeGreaterThan(1);

    await model.getByRole('button', { name: 'chat gpt-test' }).click();
    const panel = page.getByRole('complementary', { name: 'Span details' });
    await panel.waitFor();
    const attrs = panel.getByRole('table', { name: 'Attributes' });
    const modelRow = attrs.getByRole('row').filter({ hasText: 'gen_ai.request.model' });
    expect(await modelRow.textContent()).toContain('gpt-test');
    const figures = panel.getByLabel('Model call');
    const fig = (await figures.textContent()) ?? '';
    expect(fig).toContain('gpt-test');
    expect(fig).toContain('Input tokens12');
    expect(fig).toContain('Output tokens4');
    await stack.screenshot(page, 'trace-waterfall');

    // The trace list finds it by conversation.
    await page.goto(`${stack.api.url}/console/traces?window=1h&conversation_id=${run.conversation_id}`);
    const list = page.getByRole('table', { name: 'Traces' });
    await list.getByRole('link', { name: 'POST /api/agent-server/converse' }).waitFor();
    expect(await list.getByRole('row').count()).toBe(2); // header + the one trace
    await stack.screenshot(page, 'traces');
    expect(world.problems()).toEqual([]);
  });

  it('folds database and HTTP spans in the "LLM and tools" view, and remembers the view', async () => {
    const page = await world.open(`/traces/${run.trace_id}`);
    const waterfall = page.getByRole('region', { name: 'Trace waterfall' });
    const model = waterfall.locator('[data-span-name="chat gpt-test"]');
    await model.waitFor();
    const queries = waterfall.locator('[data-span-name^="pg."]');
    expect(await queries.count()).toBeGreaterThan(0);
    const view = page.getByRole('radiogroup', { name: 'Waterfall view' });
    await view.getByText('LLM and tools').click();
    await page.getByText(/database and HTTP spans? folded/).waitFor();
    expect(await queries.count()).toBe(0);
    // The turn's model call, activities and the request are still there, nested.
    await model.waitFor();
    await waterfall.locator('[data-span-name="RunActivity:callModel"]').waitFor();
    await waterfall.locator('[data-span-name="POST /api/agent-server/converse"]').waitFor();
    await page.reload();
    await model.waitFor();
    expect(await queries.count()).toBe(0);
    await view.getByText('All spans').click();
    await queries.first().waitFor();
    expect(world.problems()).toEqual([]);
  });

  it("shows on a model span that the project's content recording is off", async () => {
    const page = await world.open(`/traces/${run.trace_id}`);
    const model = page
      .getByRole('region', { name: 'Trace waterfall' })
      .locator('[data-span-name="chat gpt-test"]');
    await model.getByRole('button', { name: 'chat gpt-test' }).click();
    const panel = page.getByRole('complementary', { name: 'Span details' });
    await panel.getByText('Content recording is off for this project.').waitFor();
    expect(await panel.textContent()).not.toContain('trace me');
    expect(world.problems()).toEqual([]);
  });

  it('draws the waterfall in the dark colour scheme: its header and lines are not white', async () => {
    const page = await world.open(`/traces/${run.trace_id}`);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.evaluate(() => localStorage.setItem('mantine-color-scheme-value', 'dark'));
    await page.reload();
    const waterfall = page.getByRole('region', { name: 'Trace waterfall' });
    await waterfall.locator('[data-span-name="chat gpt-test"]').waitFor();
    expect(await page.locator('html').getAttribute('data-mantine-color-scheme')).toBe('dark');
    // Evaluated in the page (this file has no DOM types): the computed colours of the header and its lines.
    type Style = { backgroundColor: string; borderLeftColor: string; borderBottomColor: string };
    const colours = await page.evaluate(() => {
      const w = globalThis as unknown as {
        document: { querySelector(selector: string): unknown };
        getComputedStyle(el: unknown): Style;
      };
      const style = (selector: string) => {
        const el = w.document.querySelector(`section[aria-label="Trace waterfall"] ${selector}`);
        return el ? w.getComputedStyle(el) : undefined;
      };
      return {
        header: style('> div')?.backgroundColor ?? '',
        tick: style('[class*="tick"]')?.borderLeftColor ?? '',
        row: style('[data-span-name]')?.borderBottomColor ?? '',
      };
    });
    /** Relative luminance 0 (black) … 1 (white) of an `rgb(…)` colour. */
    const light = (rgb: string) => {
      const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).map(Number);
      return (0.2126 * (r ?? 255) + 0.7152 * (g ?? 255) + 0.0722 * (b ?? 255)) / 255;
    };
    for (const [what, colour] of Object.entries(colours))
      expect({ what, colour, dark: light(colour) < 0.5 }).toEqual({ what, colour, dark: true });
    await stack.screenshot(page, 'trace-waterfall-dark');
    expect(world.problems()).toEqual([]);
  });

  it('the statistics tables show the converse endpoint and the model', async () => {
    const page = await world.open('/traces/stats?window=1h');
    const endpoints = page.getByRole('table', { name: 'Endpoint statistics' });
    await endpoints.getByRole('row').filter({ hasText: 'POST /api/agent-server/converse' }).first().waitFor();
    const models = page.getByRole('table', { name: 'Model statistics' });
    const row = models.getByRole('row').filter({ hasText: 'gpt-test' }).first();
    await row.waitFor();
    await page.getByRole('table', { name: 'Service statistics' }).getByText('agent-server-api').waitFor();
    // Another window keeps working.
    await page.getByText('Last 15m').click();
    await endpoints.getByRole('row').filter({ hasText: 'POST /api/agent-server/converse' }).first().waitFor();
    // The page's own requests are left out unless asked for: the switch asks the API for them
    // (what the API counts either way is tested in integration/traces/request-spans.test.ts; here
    // other tests of the run call the same endpoints without the console's header).
    const including = page.waitForResponse(
      (r) =>
        r.url().includes('/api/agent-server/traces/stats/endpoints') &&
        r.url().includes('include_console=true') &&
        r.status() === 200,
      { timeout: 15_000 },
    );
    const toggle = page.getByRole('switch', { name: "Console's own requests" });
    await toggle.check({ force: true });
    await including;
    await endpoints.getByRole('row').filter({ hasText: 'POST /api/agent-server/converse' }).first().waitFor();
    await toggle.uncheck({ force: true });
    await endpoints.getByRole('row').filter({ hasText: 'POST /api/agent-server/converse' }).first().waitFor();
    await stack.screenshot(page, 'trace-stats');
    expect(world.problems()).toEqual([]);
  });
});
