/** The MCP door's pure parts: agents as tools (names, schemas) and a call's arguments. */
import { describe, expect, it } from 'vitest';
import { agentTools, callArguments, toolDefinition } from '../../api/protocols/mcp/tools.js';

const agent = (id: string, name: string, schema: Record<string, unknown> | null = null) => ({
  id,
  name,
  description: null,
  schema,
  mcpMessage: null,
});

describe('agents as MCP tools', () => {
  it('names follow the tool-name rule; names that collide get the start of their id', () => {
    const tools = agentTools([
      agent('aaaaaaaa-1111-4000-8000-000000000000', 'my agent'),
      agent('bbbbbbbb-2222-4000-8000-000000000000', 'my_agent'),
      agent('cccccccc-3333-4000-8000-000000000000', 'Support Bot (EU) ü'),
      agent('dddddddd-4444-4000-8000-000000000000', 'x'.repeat(200)),
    ]);
    expect(tools.map((t) => t.name)).toEqual([
      'my_agent_aaaaaaaa',
      'my_agent_bbbbbbbb',
      'Support_Bot__EU___',
      'x'.repeat(128),
    ]);
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
  });

  it('the agent schema is the output schema only when it is an object at the root', () => {
    const [obj, arr] = agentTools([
      agent('a', 'obj', { type: 'object', properties: { answer: { type: 'string' } } }),
      agent('b', 'arr', { type: 'array' }),
    ]);
    expect(toolDefinition(obj!)).toMatchObject({
      name: 'obj',
      title: 'obj',
      description: 'Ask the agent "obj"',
      outputSchema: { type: 'object' },
    });
    expect(toolDefinition(arr!)).not.toHaveProperty('outputSchema');
  });

  it('arguments: message required, conversation_id checked, nothing else', () => {
    expect(callArguments({ message: 'hi' })).toEqual({ message: 'hi' });
    expect(callArguments({ message: 'hi', conversation_id: 'c-1' })).toEqual({
      message: 'hi',
      conversationId: 'c-1',
    });
    const problem = (args: Record<string, unknown> | undefined) => {
      const r = callArguments(args);
      return 'problem' in r ? r.problem : undefined;
    };
    expect(problem(undefined)).toMatch(/"message" is required/);
    expect(problem({ message: '  ' })).toMatch(/"message"/);
    expect(problem({ message: 'hi', conversation_id: 'a b' })).toMatch(/"conversation_id"/);
    expect(callArguments({ message: 'hi', conversation_id: 'x'.repeat(129) })).toHaveProperty('problem');
    expect(callArguments({ message: 'hi', extra: 1 })).toEqual({ problem: 'unknown argument "extra"' });
  });

  it('an agent with mcp_message: message optional, its default shown and used; a message given wins', () => {
    const [tool] = agentTools([{ ...agent('e', 'report'), mcpMessage: 'Write the daily report.' }]);
    const schema = toolDefinition(tool!).inputSchema as {
      required?: string[];
      properties: Record<string, { default?: string }>;
    };
    expect(schema.required).toBeUndefined();
    expect(schema.properties.message!.default).toBe('Write the daily report.');
    expect(callArguments({}, 'Write the daily report.')).toEqual({ message: 'Write the daily report.' });
    expect(callArguments({ message: 'only sales' }, 'Write the daily report.')).toEqual({
      message: 'only sales',
    });
    // Sent but empty is still the caller's mistake, not a call without a message.
    expect(callArguments({ message: '' }, 'Write the daily report.')).toHaveProperty('problem');
    const [plain] = agentTools([agent('f', 'plain')]);
    expect((toolDefinition(plain!).inputSchema as { required?: string[] }).required).toEqual(['message']);
  });
});
