/**
 * Which browser origins may call the Agent Protocol door (`/api/langgraph/…`)
 * cross-origin: AGENT_PROTOCOL_CORS_ORIGINS, comma-separated origins
 * (`https://chat.example.com`, `http://localhost:3000`) or `*`. Pure: parsing
 * and matching; api/protocols/langgraph/cors.ts answers with it and
 * api/middleware/host-check.ts lets those origins change state on that path.
 */
export interface CorsOrigins {
  /** `*`: any origin (the answer then echoes the caller's origin, never a literal `*`). */
  any: boolean;
  /** Serialised origins (`scheme://host[:port]`, lowercase, default port dropped). */
  origins: string[];
}

export const NO_CORS: CorsOrigins = { any: false, origins: [] };

/** One entry as a browser serialises it in `Origin`, or an error saying what is wrong. */
function parseOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not an origin (scheme://host[:port])`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`"${text}": an origin is http:// or https://`);
  // A path, query or credentials mean the entry is a URL, not an origin: it would never match.
  if (url.username || url.password || url.search || url.hash || !/^[a-z]+:\/\/[^/]+\/?$/i.test(text))
    throw new Error(`"${text}": give the origin only (scheme://host[:port]), without a path`);
  return url.origin;
}

/** Checks AGENT_PROTOCOL_CORS_ORIGINS (comma-separated); throws naming the first bad entry. */
export function parseCorsOrigins(value: string | undefined): CorsOrigins {
  if (value === undefined) return NO_CORS;
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('no entry (leave it unset for none)');
  const result: CorsOrigins = { any: false, origins: [] };
  for (const entry of entries) {
    if (entry === '*') result.any = true;
    else result.origins.push(parseOrigin(entry));
  }
  result.origins = [...new Set(result.origins)];
  return result;
}

/** Whether a request's `Origin` header is one of the allowed origins (`null` never is). */
export function corsOriginAllowed(cors: CorsOrigins, origin: string): boolean {
  if (origin === '' || origin === 'null') return false;
  if (cors.any) return /^https?:\/\/[^/]+$/i.test(origin);
  let serialised: string;
  try {
    serialised = new URL(origin).origin;
  } catch {
    return false;
  }
  return cors.origins.includes(serialised);
}
