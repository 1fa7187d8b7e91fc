import { describe, expect, it } from 'vitest';
import { MAX_STRUCTURED_CHARS, mcpResultExtras } from '../../activities/tools/mcp-result.js';

describe('what an MCP result says beside its text, kept with the stored tool result', () => {
  it('keeps structuredContent and the resource links (their uri, name, title, mime type, description)', () => {
    const extras = mcpResultExtras({
      content: [
        { type: 'text', text: 'two links' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a', mimeType: 'text/plain', description: 'A' },
        { type: 'resource_link', uri: 'https://x.test/b', title: 'B', extra: 1 },
      ],
      structuredContent: { temperature: 21 },
    });
    expect(extras).toEqual({
      structured_content: { temperature: 21 },
      resource_links: [
        { uri: 'file:///a.txt', name: 'a', mime_type: 'text/plain', description: 'A' },
        { uri: 'https://x.test/b', title: 'B' },
      ],
    });
  });

  it('says nothing when there is nothing beside the text, and leaves out a link without a uri', () => {
    expect(mcpResultExtras({ content: [{ type: 'text', text: 'hi' }, { type: 'resource_link' }] })).toEqual(
      {},
    );
    expect(mcpResultExtras({ content: 'not a list', structuredContent: null })).toEqual({});
  });

  it('leaves out structuredContent too large to keep (the text carries the answer)', () => {
    const big = { blob: 'x'.repeat(MAX_STRUCTURED_CHARS) };
    expect(mcpResultExtras({ structuredContent: big })).toEqual({});
  });
});
