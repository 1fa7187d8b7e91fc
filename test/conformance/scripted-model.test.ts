import { describe, expect, it } from 'vitest';
import { callEveryOfferedTool, FINAL_ANSWER } from './scripted-model.js';
import { argumentsFor } from './tool-arguments.js';

const tool = (name: string, parameters: unknown) => ({ type: 'function', function: { name, parameters } });

describe('argumentsFor', () => {
  it('gives add_numbers-like tools a = 2, b = 3', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    };
    expect(argumentsFor(schema)).toEqual({ a: 2, b: 3 });
  });

  it('fills required properties only, with defaults, enums, nullable unions and nested objects', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'Ada' },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        count: { type: ['integer', 'null'] },
        flag: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        inner: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        optional: { type: 'string' },
      },
      required: ['name', 'mode', 'count', 'flag', 'tags', 'inner'],
    };
    expect(argumentsFor(schema)).toEqual({
      name: 'Ada',
      mode: 'fast',
      count: 2,
      flag: true,
      tags: [],
      inner: { id: 'test' },
    });
  });

  it('answers {} for a missing or empty schema', () => {
    expect(argumentsFor(undefined)).toEqual({});
    expect(argumentsFor({ type: 'object' })).toEqual({});
  });
});

describe('callEveryOfferedTool', () => {
  it('calls every offered tool at the person’s message, then answers with text', () => {
    const tools = [
      tool('add_numbers', { type: 'object', required: ['a'], properties: { a: { type: 'number' } } }),
      tool('ping', {}),
    ];
    const first = callEveryOfferedTool({ messages: [{ role: 'user' }], tools });
    expect(first.reply?.tool_calls).toEqual([
      { name: 'add_numbers', arguments: { a: 2 } },
      { name: 'ping', arguments: {} },
    ]);
    const second = callEveryOfferedTool({
      messages: [{ role: 'user' }, { role: 'assistant' }, { role: 'tool' }],
      tools,
    });
    expect(second.reply).toMatchObject({ text: FINAL_ANSWER });
  });

  it('answers with text when no tool is offered', () => {
    expect(callEveryOfferedTool({ messages: [{ role: 'user' }] }).reply).toMatchObject({
      text: FINAL_ANSWER,
    });
  });

  it('echoes the focal tool’s schema through json_schema_echo', () => {
    const focal = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', $defs: {} };
    const tools = [tool('json_schema_2020_12_tool', focal), tool('json_schema_echo', { type: 'object' })];
    const calls = callEveryOfferedTool({ messages: [{ role: 'user' }], tools }).reply?.tool_calls;
    expect(calls?.[1]).toEqual({ name: 'json_schema_echo', arguments: { schema: focal } });
  });
});
