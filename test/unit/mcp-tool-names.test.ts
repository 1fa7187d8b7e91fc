import { describe, expect, it } from 'vitest';
import { mcpResultText, truncateOutput } from '../../activities/tools/mcp-result.js';
import { assignToolNames, sanitizeToolName, TOOL_NAME_PATTERN } from '../../activities/tools/tool-names.js';

describe('MCP tool names offered to the model', () => {
  it('keeps unique names and suffixes every tool of a clash with its server name', () => {
    const names = assignToolNames(
      [
        { tool: 'search', server_name: 'docs' },
        { tool: 'echo', server_name: 'docs' },
        { tool: 'search', server_name: 'web' },
      ],
      ['execute_bash_commands'],
    );
    expect(names).toEqual(['search__docs', 'echo', 'search__web']);
  });

  it('never offers a reserved name', () => {
    expect(
      assignToolNames([{ tool: 'execute_bash_commands', server_name: 'evil' }], ['execute_bash_commands']),
    ).toEqual(['execute_bash_commands__evil']);
  });

  it('makes names valid for every vendor, and unique even after sanitizing and truncating', () => {
    const long = 'x'.repeat(80);
    const tools = [
      { tool: 'files.read', server_name: 'a' },
      { tool: 'files/read', server_name: 'a' }, // same sanitized name on the same server
      { tool: long, server_name: 'a server with spaces and a very long name indeed' },
      { tool: `${long}y`, server_name: 'a server with spaces and a very long name indeed' },
      { tool: 'ünïcödé', server_name: 'b' },
      { tool: '', server_name: 'b' },
    ];
    const names = assignToolNames(tools);
    expect(names).toEqual([
      'files_read__a',
      'files_read__a_2',
      expect.stringMatching(/^x{38}__a_server_with_spaces_and$/),
      expect.stringMatching(/^x{36}__a_server_with_spaces_and_2$/),
      '_n_c_d_',
      'tool',
    ]);
    for (const n of names) expect(n).toMatch(TOOL_NAME_PATTERN);
    expect(new Set(names).size).toBe(names.length);
  });

  it('does not let a suffixed name take a name a server uses literally', () => {
    const names = assignToolNames([
      { tool: 'echo', server_name: 'a' },
      { tool: 'echo', server_name: 'b' },
      { tool: 'echo__a', server_name: 'c' },
    ]);
    expect(names).toEqual(['echo__a_2', 'echo__b', 'echo__a']);
  });

  it('is deterministic', () => {
    const tools = [
      { tool: 'a', server_name: 's1' },
      { tool: 'a', server_name: 's2' },
    ];
    expect(assignToolNames(tools)).toEqual(assignToolNames(tools));
    expect(sanitizeToolName('ok_name-1')).toBe('ok_name-1');
  });
});

describe('MCP results as text for the model', () => {
  it('joins text, summarises binary parts and inlines embedded text resources', () => {
    expect(
      mcpResultText({
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', mimeType: 'image/png', data: Buffer.alloc(1234).toString('base64') },
          { type: 'audio', mimeType: 'audio/wav', data: Buffer.alloc(10).toString('base64') },
          { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'inside' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: Buffer.alloc(3).toString('base64') } },
          { type: 'resource_link', uri: 'file:///c', name: 'c', mimeType: 'text/csv' },
          { type: 'hologram' },
        ],
      }),
    ).toBe(
      [
        'one',
        '[image image/png, 1234 bytes]',
        '[audio audio/wav, 10 bytes]',
        '[resource file:///a.txt text/plain]\ninside',
        '[resource file:///b.bin, 3 bytes]',
        '[resource link file:///c "c" text/csv]',
        '[hologram content]',
      ].join('\n'),
    );
  });

  it('uses structuredContent only without text, and says when there was nothing', () => {
    expect(mcpResultText({ content: [{ type: 'text', text: 'a' }], structuredContent: { x: 1 } })).toBe('a');
    expect(mcpResultText({ content: [], structuredContent: { x: 1 } })).toBe('{"x":1}');
    expect(mcpResultText({ content: [] })).toBe('(the tool returned no content)');
    expect(mcpResultText({ content: [], isError: true })).toBe(
      'the tool reported an error without a message',
    );
    expect(mcpResultText({ toolResult: { legacy: true } })).toBe('{"legacy":true}');
  });

  it('truncates long output saying how much was cut', () => {
    expect(truncateOutput('abcdef', 4)).toBe('abcd\n…[truncated: 2 more characters]');
    expect(truncateOutput('abc', 4)).toBe('abc');
  });
});
