/** The pure parts of remote A2A tools: tool names, the delegate skill, readable parts, the call's message id. */
import type { AgentCard, Part } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { partsText } from '../../core/a2a/client.js';
import { a2aToolName, cardSkills } from '../../core/a2a/skills.js';
import { callMessageId } from '../../activities/tools/a2a-task-call.js';
import { TOOL_NAME_PATTERN } from '../../activities/tools/tool-names.js';

const part = (content: Part['content'], extra: Partial<Part> = {}): Part => ({
  content,
  metadata: undefined,
  filename: '',
  mediaType: '',
  ...extra,
});

describe('A2A tools', () => {
  it('names a skill <agent>__<skill>, in the characters every vendor accepts, at most 64', () => {
    expect(a2aToolName('billing', 'refund')).toBe('billing__refund');
    expect(a2aToolName('our agent.v2', 'look/up')).toBe('our_agent_v2__look_up');
    const long = a2aToolName('a'.repeat(80), 's'.repeat(80));
    expect(long).toMatch(TOOL_NAME_PATTERN);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toContain('__');
  });

  it('a card without skills is one delegate skill named after the card', () => {
    const card = { name: 'Helper', description: 'helps', skills: [] } as unknown as AgentCard;
    expect(cardSkills(card)).toEqual([
      { id: 'delegate', name: 'Helper', description: 'helps', examples: [] },
    ]);
  });

  it('joins streamed text chunks as one text; data and files on lines of their own', () => {
    expect(partsText([part({ $case: 'text', value: 'stre' }), part({ $case: 'text', value: 'amed' })])).toBe(
      'streamed',
    );
    expect(
      partsText([
        part({ $case: 'text', value: 'see' }),
        part({ $case: 'data', value: { a: 1 } }),
        part({ $case: 'url', value: 'https://x/f.pdf' }, { filename: 'f.pdf' }),
      ]),
    ).toBe('see\n{"a":1}\n\n[file f.pdf](https://x/f.pdf)');
    expect(partsText(undefined)).toBe('');
  });

  it("the message id is the call's own: the same on every attempt, another for another call", () => {
    const id = callMessageId('run-1', '1:call_a');
    expect(id).toBe(callMessageId('run-1', '1:call_a'));
    expect(id).not.toBe(callMessageId('run-1', '2:call_a'));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
