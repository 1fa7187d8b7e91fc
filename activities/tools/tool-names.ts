/**
 * Names offered to the model for MCP tools. Every vendor accepts
 * `^[a-zA-Z0-9_-]{1,64}$`; MCP servers may use dots, slashes or longer names,
 * and two servers may expose the same name. The assignment is a pure function
 * of its inputs, so the same agent configuration and listings give the same
 * names on every turn and every worker.
 */

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;
/** At most this much of the server name goes into a suffix, so the tool's own name stays readable. */
const MAX_SERVER_SUFFIX = 24;

/** Replaces characters vendors refuse with `_` and cuts to 64; never empty. */
export function sanitizeToolName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX);
  return cleaned.length > 0 ? cleaned : 'tool';
}

export interface ToolToName {
  /** The server's own tool name. */
  tool: string;
  /** The server's configured name (unique within a project). */
  server_name: string;
}

/**
 * Returns one offered name per input, in the same order.
 *
 * 1. A tool whose sanitized name no other tool shares and that is not
 *    reserved keeps it.
 * 2. Every tool of a clash (same sanitized name on several servers, or a
 *    reserved name) gets `<tool>__<server>`; should that still clash (the
 *    same server listed twice, truncation), `_2`, `_3`, … in input order.
 */
export function assignToolNames(tools: ToolToName[], reservedNames: Iterable<string> = []): string[] {
  const reserved = new Set(reservedNames);
  const bases = tools.map((t) => sanitizeToolName(t.tool));
  const counts = new Map<string, number>();
  for (const b of bases) counts.set(b, (counts.get(b) ?? 0) + 1);

  const taken = new Set(reserved);
  const names: Array<string | undefined> = bases.map((b) => {
    if (counts.get(b) === 1 && !reserved.has(b)) {
      taken.add(b);
      return b;
    }
    return undefined;
  });

  tools.forEach((t, i) => {
    if (names[i] !== undefined) return;
    const suffix = `__${sanitizeToolName(t.server_name).slice(0, MAX_SERVER_SUFFIX)}`;
    let candidate = fit(bases[i]!, suffix);
    for (let n = 2; taken.has(candidate); n += 1) candidate = fit(bases[i]!, `${suffix}_${n}`);
    taken.add(candidate);
    names[i] = candidate;
  });
  return names as string[];
}

function fit(base: string, suffix: string): string {
  return base.slice(0, MAX - suffix.length) + suffix;
}
