/** Small readers for request bodies that have not been validated against a schema. */

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value when it is a string, otherwise the fallback (never "[object Object]"). */
export const str = (v: unknown, fallback = ''): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : fallback;

/** A tool call's JSON arguments as an object for formats that send them parsed; empty or unreadable text is `{}`. */
export function toolArguments(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return {};
  }
}
