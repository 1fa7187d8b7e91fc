/**
 * The trace list (newest first, with the API's filters kept in the URL, an
 * empty state that says what to do) and the waterfall (spans nested under
 * their parents on the trace's time axis, collapsible, selectable).
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { Span, TraceSummary } from '../src/api/types.js';
import { TraceList } from '../src/features/traces/trace-list.js';
import { Waterfall } from '../src/features/traces/waterfall.js';
import { input } from './dom.js';
import { answer, failure, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const TRACES: TraceSummary[] = [
  {
    trace_id: 'a'.repeat(32),
    root_span_name: 'POST /api/agent-server/converse',
    root_service_name: 'agent-server-api',
    start_time: '2026-03-01T10:00:00.000Z',
    duration_ms: 1250,
    span_count: 7,
    error_count: 0,
  },
  {
    trace_id: 'b'.repeat(32),
    root_span_name: 'GET /api/agent-server/agents',
    root_service_name: 'agent-server-api',
    start_time: '2026-03-01T09:59:00.000Z',
    duration_ms: 12,
    span_count: 2,
    error_count: 3,
  },
];

const traceQueries = () =>
  requests.filter((r) => r.method === 'GET' && r.path === '/api/agent-server/traces').map((r) => r.query);

describe('the trace list', () => {
  it('lists the traces of the window, each linking to its waterfall, with its errors', async () => {
    answer('GET /api/agent-server/traces', ok(TRACES));
    renderPage(<TraceList />, { path: '/traces?window=1h' });

    const table = await screen.findByRole('table', { name: 'Traces' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    const link = within(rows[0]!).getByRole('link', { name: 'POST /api/agent-server/converse' });
    expect(link.getAttribute('href')).toBe(`/traces/${'a'.repeat(32)}`);
    expect(rows[0]!.textContent).toContain('1.25 s');
    expect(rows[1]!.textContent).toContain('12 ms');
    expect(within(rows[1]!).getByText('3')).toBeTruthy();

    const [query] = traceQueries();
    expect(query?.get('limit')).toBe('50');
    const windowMs = Date.parse(query!.get('end_time')!) - Date.parse(query!.get('start_time')!);
    expect(windowMs).toBe(3_600_000);
  });

  it('says what to do when the window holds no trace', async () => {
    answer('GET /api/agent-server/traces', ok([]));
    renderPage(<TraceList />);
    expect(await screen.findByText('No trace in this window')).toBeTruthy();
    expect(screen.getByText(/talk to an agent in the playground, or widen the time window/)).toBeTruthy();
  });

  it('reads its filters from the URL, and says so when nothing matches them', async () => {
    answer('GET /api/agent-server/traces', ok([]));
    renderPage(<TraceList />, { path: '/traces?has_errors=true&min_duration_ms=500&conversation_id=c-1' });
    expect(await screen.findByText('No trace matches these filters')).toBeTruthy();
    const [query] = traceQueries();
    expect(query?.get('has_errors')).toBe('true');
    expect(query?.get('min_duration_ms')).toBe('500');
    expect(query?.get('conversation_id')).toBe('c-1');
    expect(input('Conversation').value).toBe('c-1');
  });

  it('queries again with the filters applied in the form, from the first page', async () => {
    answer('GET /api/agent-server/traces', ok(TRACES));
    const user = userEvent.setup();
    renderPage(<TraceList />, { path: '/traces?offset=50' });
    await screen.findByRole('table', { name: 'Traces' });
    await user.type(input('Span name contains'), 'converse');
    await user.click(screen.getByRole('button', { name: 'Apply' }));

    await waitFor(() => expect(traceQueries().at(-1)?.get('span_name')).toBe('converse'));
    expect(traceQueries()[0]?.get('offset')).toBe('50');
    expect(traceQueries().at(-1)?.get('offset')).toBe('0');
  });

  it('shows what the API said when the list fails', async () => {
    answer('GET /api/agent-server/traces', failure(503, 'Trace store unavailable'));
    renderPage(<TraceList />);
    expect((await screen.findByRole('alert')).textContent).toContain('Trace store unavailable');
  });
});

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
function span(
  id: string,
  parent: string | null,
  name: string,
  startMs: number,
  durationMs: number,
  more = {},
) {
  return {
    trace_id: 'a'.repeat(32),
    span_id: id,
    parent_span_id: parent,
    name,
    kind: 'INTERNAL',
    service_name: 'agent-server-api',
    start_time: new Date(T0 + startMs).toISOString(),
    duration_ms: durationMs,
    status_code: 'UNSET',
    attributes: {},
    ...more,
  } as Span;
}

const SPANS: Span[] = [
  span('s-model', 's-turn', 'chat gpt-test', 20, 50, {
    attributes: {
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 4,
    } as never,
  }),
  span('s-root', null, 'POST /api/agent-server/converse', 0, 100),
  span('s-turn', 's-root', 'turn', 10, 80),
  span('s-fail', 's-turn', 'execute_bash_commands', 75, 5, { status_code: 'ERROR' }),
];

const rowOf = (name: string) => document.querySelector<HTMLElement>(`[data-span-name="${name}"]`);
const indentOf = (name: string) =>
  Number.parseFloat(rowOf(name)!.querySelector('div')!.style.paddingLeft || '0');

describe('the waterfall', () => {
  it('nests spans under their parents, in start order, with the model call figures on its row', () => {
    renderPage(<Waterfall spans={SPANS} selectedId={null} onSelect={() => {}} />);
    const region = screen.getByRole('region', { name: 'Trace waterfall' });
    const order = [...region.querySelectorAll('[data-span-name]')].map((r) =>
      r.getAttribute('data-span-name'),
    );
    expect(order).toEqual([
      'POST /api/agent-server/converse',
      'turn',
      'chat gpt-test',
      'execute_bash_commands',
    ]);
    expect(indentOf('turn')).toBeGreaterThan(indentOf('POST /api/agent-server/converse'));
    expect(indentOf('chat gpt-test')).toBeGreaterThan(indentOf('turn'));
    expect(rowOf('chat gpt-test')!.textContent).toContain('gpt-test · 12→4');
    expect(rowOf('chat gpt-test')!.textContent).toContain('50 ms');
    expect(screen.getByText('(4 shown of 4)')).toBeTruthy();
    // A time axis of 100 ms: ticks every 20 ms.
    for (const tick of ['0 ms', '20 ms', '100 ms'])
      expect(within(region).getAllByText(tick).length).toBeGreaterThan(0);
  });

  it('collapses a span to hide what runs under it, and expands it again', async () => {
    const user = userEvent.setup();
    renderPage(<Waterfall spans={SPANS} selectedId={null} onSelect={() => {}} />);
    await user.click(screen.getByRole('button', { name: 'Collapse turn' }));
    expect(rowOf('chat gpt-test')).toBeNull();
    expect(rowOf('execute_bash_commands')).toBeNull();
    expect(screen.getByText('(2 shown of 4)')).toBeTruthy();
    const expand = screen.getByRole('button', { name: 'Expand turn' });
    expect(expand.getAttribute('aria-expanded')).toBe('false');
    await user.click(expand);
    expect(rowOf('chat gpt-test')).not.toBeNull();
  });

  it('selects the span that is clicked, and marks the selected one', async () => {
    const onSelect = vi.fn();
    const user = userEvent.setup();
    renderPage(<Waterfall spans={SPANS} selectedId="s-turn" onSelect={onSelect} />);
    await user.click(screen.getByRole('button', { name: 'chat gpt-test' }));
    expect(onSelect).toHaveBeenCalledWith('s-model');
    expect(screen.getByRole('button', { name: 'turn' }).getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByRole('button', { name: 'chat gpt-test' }).getAttribute('aria-pressed')).toBe('false');
    expect(rowOf('turn')!.hasAttribute('data-selected')).toBe(true);
  });

  it('treats a span whose parent is not in the trace as a root', () => {
    const orphan = span('s-orphan', 'not-here', 'late export', 50, 10);
    renderPage(<Waterfall spans={[...SPANS, orphan]} selectedId={null} onSelect={() => {}} />);
    expect(indentOf('late export')).toBe(indentOf('POST /api/agent-server/converse'));
  });
});

describe('the "LLM and tools" view', () => {
  // A query under the turn, an HTTP call under the tool with a query under it.
  const plumbing: Span[] = [
    ...SPANS,
    span('s-query', 's-turn', 'pg.query:SELECT', 12, 2, {
      kind: 'CLIENT',
      attributes: { 'db.system': 'postgresql' } as never,
    }),
    span('s-http', 's-fail', 'POST', 76, 3, {
      kind: 'CLIENT',
      attributes: { 'http.request.method': 'POST' } as never,
    }),
    span('s-inner', 's-http', 'pg.query:INSERT', 77, 1, { kind: 'CLIENT' }),
    span('s-deep', 's-http', 'sandbox.exec', 77, 1),
  ];

  it('folds queries and HTTP calls, hangs what ran under them on the nearest span shown, and remembers the view', async () => {
    localStorage.removeItem('agent-server.traces.view');
    const user = userEvent.setup();
    const page = renderPage(<Waterfall spans={plumbing} selectedId={null} onSelect={() => {}} />);
    expect(rowOf('pg.query:SELECT')).not.toBeNull();
    await user.click(screen.getByText('LLM and tools'));
    for (const name of ['pg.query:SELECT', 'POST', 'pg.query:INSERT']) expect(rowOf(name)).toBeNull();
    expect(screen.getByText('3 database and HTTP spans folded')).toBeTruthy();
    // The model call stays; the sandbox span under the folded HTTP call hangs under the tool span.
    expect(rowOf('chat gpt-test')).not.toBeNull();
    expect(indentOf('sandbox.exec')).toBeGreaterThan(indentOf('execute_bash_commands'));
    page.unmount();
    renderPage(<Waterfall spans={plumbing} selectedId={null} onSelect={() => {}} />);
    expect(rowOf('pg.query:SELECT')).toBeNull();
    await user.click(screen.getByText('All spans'));
    expect(rowOf('pg.query:SELECT')).not.toBeNull();
  });
});
