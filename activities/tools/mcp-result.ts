/**
 * An MCP `tools/call` result as text for the model: text parts as they are,
 * binary parts summarised (the model cannot use base64 here, and it would
 * flood the context and the workflow history), embedded text resources
 * inlined, `structuredContent` as JSON when nothing else was said.
 */

/** The subset of a CallToolResult read here; anything unknown is summarised by its type. */
export interface McpCallToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** Legacy (protocol 2024-10-07) results carry `toolResult` instead of content. */
  toolResult?: unknown;
}

/** Tool output above this is cut (the result travels through Temporal history and the model's context). */
export const DEFAULT_MAX_OUTPUT_CHARS = 100_000;

const NO_OUTPUT = '(the tool returned no content)';

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Buffer.byteLength(data, 'base64') : 0;
}

/** A field's value when it is a string, else '' (servers send what they like). */
function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function describePart(part: unknown): string {
  if (!part || typeof part !== 'object') return String(part);
  const p = part as Record<string, unknown>;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? p.text : '';
    case 'image':
    case 'audio':
      return `[${p.type} ${str(p.mimeType) || 'unknown type'}, ${base64Bytes(p.data)} bytes]`;
    case 'resource': {
      const r = (p.resource ?? {}) as Record<string, unknown>;
      const head = `[resource ${str(r.uri)}${str(r.mimeType) ? ` ${str(r.mimeType)}` : ''}`;
      if (typeof r.text === 'string') return `${head}]\n${r.text}`;
      return `${head}, ${base64Bytes(r.blob)} bytes]`;
    }
    case 'resource_link': {
      const label = str(p.name) || str(p.title);
      return `[resource link ${str(p.uri)}${label ? ` "${label}"` : ''}${
        str(p.mimeType) ? ` ${str(p.mimeType)}` : ''
      }${str(p.description) ? `: ${str(p.description)}` : ''}]`;
    }
    default:
      return `[${typeof p.type === 'string' ? p.type : 'unknown'} content]`;
  }
}

/** Cuts `text` to `max` characters, saying how much was left out. */
export function truncateOutput(text: string, max = DEFAULT_MAX_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n…[truncated: ${text.length - max} more characters]`;
}

/** The text the model sees for a tool result (before truncation). */
export function mcpResultText(result: McpCallToolResultLike): string {
  const parts = Array.isArray(result.content) ? result.content.map(describePart) : [];
  const text = parts.filter((s) => s.length > 0).join('\n');
  if (text.length > 0) return text;
  if (result.structuredContent !== undefined && result.structuredContent !== null)
    return JSON.stringify(result.structuredContent);
  if (result.toolResult !== undefined)
    return typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  return result.isError ? 'the tool reported an error without a message' : NO_OUTPUT;
}

/** Structured content above this size (as JSON) is not kept beside the text: the text already carries the answer. */
export const MAX_STRUCTURED_CHARS = 64_000;

/**
 * What a result says beside its text, kept with the stored tool result for
 * readers of the run (not for the model, which reads the text): the
 * `structuredContent` (when it is not too large) and the resource links.
 */
export function mcpResultExtras(result: McpCallToolResultLike): {
  structured_content?: unknown;
  resource_links?: Array<Record<string, string>>;
} {
  const links = (Array.isArray(result.content) ? (result.content as unknown[]) : [])
    .filter((p): p is Record<string, unknown> => !!p && typeof p === 'object')
    .filter((p) => p.type === 'resource_link' && typeof p.uri === 'string')
    .map((p) => {
      const link: Record<string, string> = { uri: p.uri as string };
      for (const k of ['name', 'title', 'mimeType', 'description'])
        if (typeof p[k] === 'string') link[k === 'mimeType' ? 'mime_type' : k] = p[k];
      return link;
    });
  const structured = result.structuredContent;
  const keep =
    structured !== undefined &&
    structured !== null &&
    JSON.stringify(structured).length <= MAX_STRUCTURED_CHARS;
  return {
    ...(keep ? { structured_content: structured } : {}),
    ...(links.length ? { resource_links: links } : {}),
  };
}
