import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startModelCallSpan, withModelCallSpan } from '../../../core/telemetry/genai.js';
import { mcpSpan, sandboxEnsureSpan, sandboxExecSpan } from '../../../core/telemetry/tool-spans.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('test');
const contextManager = new AsyncLocalStorageContextManager();
/** SimpleSpanProcessor hands spans over asynchronously. */
const finished = async () => {
  await provider.forceFlush();
  return exporter.getFinishedSpans();
};

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => exporter.reset());

const start = {
  system: 'openai',
  model: 'gpt-4o-mini',
  projectId: 'p-1',
  agentId: 'a-1',
  conversationId: 'c-1',
  virtualKeyId: 'vk-1',
  maxTokens: 256,
  input: [{ role: 'user', content: 'secret plans' }],
};

describe('model-call spans (GenAI conventions)', () => {
  it('records request, usage, finish reasons and ids, without content by default', async () => {
    startModelCallSpan(start, { tracer, recordContent: false }).end({
      responseModel: 'gpt-4o-mini-2024-07-18',
      inputTokens: 12,
      outputTokens: 34,
      finishReasons: ['stop'],
      costUsd: 0.0001,
      output: 'the answer',
    });
    const [span] = await finished();
    expect(span!.name).toBe('chat gpt-4o-mini');
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(span!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 256,
      'agent_server.project.id': 'p-1',
      'gen_ai.agent.id': 'a-1',
      'gen_ai.conversation.id': 'c-1',
      'agent_server.virtual_key.id': 'vk-1',
      // Outside a turn of a project that records content, and without OTEL_RECORD_CONTENT.
      'agent_server.content.recorded': false,
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 34,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.cost_usd': 0.0001,
    });
  });

  it('records prompt and completion only when content recording is on', async () => {
    startModelCallSpan(start, { tracer, recordContent: true }).end({ output: 'the answer' });
    const [span] = await finished();
    expect(span!.attributes['gen_ai.input.messages']).toBe(JSON.stringify(start.input));
    expect(span!.attributes['gen_ai.output.messages']).toBe('the answer');
  });

  it('marks failures and makes work inside the call its children', async () => {
    await expect(
      withModelCallSpan(
        start,
        () => {
          tracer.startSpan('http').end();
          return Promise.reject(new Error('vendor said 529'));
        },
        { tracer, recordContent: false },
      ),
    ).rejects.toThrow('vendor said 529');
    const spans = await finished();
    const call = spans.find((s) => s.name === 'chat gpt-4o-mini')!;
    const http = spans.find((s) => s.name === 'http')!;
    expect(http.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes['error.type']).toBe('Error');
    expect(call.events.map((e) => e.name)).toEqual(['exception']);
  });
});

describe('tool spans', () => {
  it('sandbox ensure and exec record created, exit code and timeout; MCP calls name the tool', async () => {
    await sandboxEnsureSpan('s-1', () => Promise.resolve({ created: true }), tracer);
    await sandboxExecSpan('s-1', 'ls -la', () => Promise.resolve({ exit_code: 2, timed_out: false }), tracer);
    await mcpSpan('everything', 'echo', () => Promise.resolve('ok'), tracer);
    await mcpSpan('everything', undefined, () => Promise.resolve([]), tracer);
    const spans = (await finished()).map((s) => ({ name: s.name, attributes: s.attributes }));
    expect(spans).toEqual([
      { name: 'sandbox.ensure', attributes: { 'sandbox.session.id': 's-1', 'sandbox.created': true } },
      {
        name: 'sandbox.exec',
        attributes: {
          'sandbox.session.id': 's-1',
          'sandbox.command.length': 6,
          'sandbox.exit_code': 2,
          'sandbox.timed_out': false,
          'agent_server.content.recorded': false,
        },
      },
      {
        name: 'mcp.tools.call echo',
        attributes: { 'mcp.server.name': 'everything', 'gen_ai.tool.name': 'echo' },
      },
      { name: 'mcp.tools.list', attributes: { 'mcp.server.name': 'everything' } },
    ]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
