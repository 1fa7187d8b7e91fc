import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startModelCallSpan } from '../../../core/telemetry/genai.js';
import { recordToolContent } from '../../../core/telemetry/tool-spans.js';
import {
  recordContentEverywhere,
  recordsContent,
  stampInherited,
  stampWorkflowSpan,
  turnAttributesOf,
  withInheritedAttributes,
  withTurn,
} from '../../../core/telemetry/turn-context.js';

const exporter = new InMemorySpanExporter();
/** As the process's span processor does: inherited attributes stamped when a span starts. */
const stamping: SpanProcessor = {
  onStart: (span: Span, parent) => stampInherited(span, parent),
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
const provider = new TracerProvider({
  spanProcessors: [stamping, new SimpleSpanProcessor({ exporter })],
});
const tracer = provider.getTracer('test');
const finished = async () => {
  await provider.forceFlush();
  return exporter.getFinishedSpans();
};
const turn = { projectId: 'p-1', agentId: 'a-1', conversationId: 'c-1', recordContent: false };

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  exporter.reset();
  recordContentEverywhere(false);
});

describe('the turn context', () => {
  it('stamps every span started in it, however deep, without overriding what a span sets itself', async () => {
    await context.with(withTurn(context.active(), turn), async () => {
      const outer = tracer.startSpan('RunActivity:callModel');
      await context.with(trace.setSpan(context.active(), outer), async () => {
        tracer.startSpan('pg.query:SELECT').end();
        tracer.startSpan('own', { attributes: { 'gen_ai.agent.id': 'other' } }).end();
        await Promise.resolve();
      });
      outer.end();
    });
    tracer.startSpan('outside').end();
    const byName = new Map((await finished()).map((s) => [s.name, s.attributes]));
    for (const name of ['RunActivity:callModel', 'pg.query:SELECT'])
      expect(byName.get(name)).toMatchObject({
        'agent_server.project.id': 'p-1',
        'gen_ai.agent.id': 'a-1',
        'gen_ai.conversation.id': 'c-1',
      });
    expect(byName.get('own')?.['gen_ai.agent.id']).toBe('other');
    expect(byName.get('outside')).toEqual({});
  });

  it('adds inherited attributes to those of an outer context', () => {
    const ctx = withInheritedAttributes(withInheritedAttributes(ROOT_CONTEXT, { a: 1 }), { b: 2 });
    const span = tracer.startSpan('x', {}, ctx);
    span.end();
    expect((span as unknown as ReadableSpan).attributes).toMatchObject({ a: 1, b: 2 });
  });

  it("records content as the turn's project says, or everywhere with the server-wide switch", async () => {
    expect(recordsContent()).toBe(false);
    const on = withTurn(ROOT_CONTEXT, { ...turn, recordContent: true });
    expect(recordsContent(on)).toBe(true);
    await context.with(on, async () => {
      startModelCallSpan({ system: 'openai', model: 'm', input: 'the prompt' }, { tracer }).end({
        output: 'the answer',
      });
      const tool = tracer.startSpan('mcp.tools.call echo');
      recordToolContent(tool, { text: 'hi' }, 'hi back');
      tool.end();
      await Promise.resolve();
    });
    const [model, tool] = await finished();
    expect(model!.attributes).toMatchObject({
      'agent_server.content.recorded': true,
      'gen_ai.input.messages': 'the prompt',
      'gen_ai.output.messages': 'the answer',
    });
    expect(tool!.attributes).toMatchObject({
      'agent_server.content.recorded': true,
      'gen_ai.tool.call.arguments': '{"text":"hi"}',
      'gen_ai.tool.call.result': 'hi back',
    });
    recordContentEverywhere(true);
    expect(recordsContent(ROOT_CONTEXT)).toBe(true);
  });

  it("reads a session's ids from its typed search attributes and its workflow spans' search attributes", () => {
    const pair = (name: string, value: string) => ({ key: { name, type: 'KEYWORD' }, value });
    expect(
      turnAttributesOf([pair('ProjectId', 'p'), pair('AgentId', 'a'), pair('ConversationId', 'c')]),
    ).toEqual({ 'agent_server.project.id': 'p', 'gen_ai.agent.id': 'a', 'gen_ai.conversation.id': 'c' });
    expect(turnAttributesOf([pair('ProjectId', 'p')])).toBeUndefined();
    expect(turnAttributesOf(undefined)).toBeUndefined();

    const span = {
      attributes: { searchAttributes: { ProjectId: ['p'], AgentId: ['a'], ConversationId: ['c'] } },
    } as unknown as ReadableSpan;
    stampWorkflowSpan(span);
    expect(span.attributes).toMatchObject({
      'agent_server.project.id': 'p',
      'gen_ai.agent.id': 'a',
      'gen_ai.conversation.id': 'c',
    });
  });
});
