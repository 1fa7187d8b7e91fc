/**
 * Keeps credentials out of what we record and show (docs/security.md#what-is-redacted-where): URLs, header
 * maps and free text (error messages, span attributes, log lines).
 *
 * Three tools, from precise to broad:
 * - `redactUrl` / `redactQuery`: a URL's userinfo and the values of query
 *   parameters named like credentials.
 * - `redactSecretValues`: the exact secrets we hold for a call (a provider's
 *   key, an MCP server's header values) wherever they appear in a text — for
 *   upstream error bodies that echo what they received. Error paths only.
 * - `redactText`: credential-shaped substrings of any text (URL userinfo,
 *   `name=value` with a credential name, `Authorization: …`-style pairs, auth
 *   schemes, well-known key formats, JWTs) — the last line of defence for
 *   spans and logs, where the exact secrets are not known.
 *
 * Each one first tests cheaply whether there is anything to do: on the
 * gateway's hot path almost nothing matches.
 */

export const REDACTED = '[redacted]';

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * A query parameter (or `name=value` pair) carries a credential when its name
 * ends in key, token, secret, password, passwd, pwd, credential(s) or
 * signature, or is auth, authorization or sig — case-insensitive, so `key`,
 * `api_key`, `apiKey`, `x-goog-api-key`, `access_token`, `client_secret`,
 * `X-Amz-Signature` all do.
 */
const SENSITIVE_PARAM =
  /(?:key|token|secret|password|passwd|pwd|credentials?|signature)$|^(?:auth|authorization|sig)$/i;
/** Cheap pre-test: no name can be sensitive unless one of these appears somewhere. */
const PARAM_HINT = /key|token|secret|pass|pwd|cred|sig|auth/i;
const mayHoldParam = (text: string) => PARAM_HINT.test(text) || text.includes('%');

export function isSensitiveParam(name: string): boolean {
  let decoded = name;
  if (name.includes('%') || name.includes('+')) {
    try {
      decoded = decodeURIComponent(name.replaceAll('+', ' '));
    } catch {
      // a malformed escape: judge the raw name
    }
  }
  return SENSITIVE_PARAM.test(decoded.trim());
}

/**
 * A header is sensitive by name when its name contains auth, cookie, key,
 * token, secret, pass, credential, session, signature or private
 * (case-insensitive): `Authorization`, `X-Auth`, `Cookie`, `X-Api-Key`,
 * `X-Session-Id`, …
 */
const SENSITIVE_HEADER_NAME = /auth|cookie|key|token|secret|pass|credential|session|signature|private/i;

/** Values that are credentials whatever the header is called. */
const AUTH_SCHEME_VALUE = /^(?:bearer|basic|token|digest|negotiate|ntlm|apikey|api-key|key|sso-key)\s+\S/i;
const JWT_VALUE = /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/;
const KNOWN_KEY_VALUE =
  /^(?:sk-|sk_|rk_|pk_live_|AIza|gh[pousr]_|github_pat_|xox[abprs]-|glpat-|AKIA|ASIA|hf_|npm_)[\w-]{8,}/;
const URL_WITH_USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*@/i;
const RANDOM_RUN = /[A-Za-z0-9+/]{20,}/g;

/**
 * A header value is a credential when it is:
 * - an auth scheme followed by something (`Bearer …`, `Basic …`, `Token …`,
 *   `Digest …`, `Negotiate …`, `NTLM …`, `ApiKey …`, `Key …`, `sso-key …`);
 * - a JWT (`eyJ….….…`);
 * - in a well-known key format (`sk-…`, `sk_…`, `rk_…`, `pk_live_…`,
 *   `AIza…`, `ghp_…`/`gho_…`/`ghu_…`/`ghs_…`/`ghr_…`, `github_pat_…`,
 *   `xox?-…`, `glpat-…`, `AKIA…`/`ASIA…`, `hf_…`, `npm_…`);
 * - a URL with userinfo or with a credential-named query parameter;
 * - a random-looking token: a value without spaces holding a run of 20 or
 *   more letters and digits (`A-Z a-z 0-9 + /`) with both letters and digits
 *   in it — hex and base64 keys (`X-Honeycomb-Team: 7f3a…`).
 * Plain values (`acme`, `eu-west-1`, `application/json`) are shown, and so
 * are UUIDs and other dash-separated ids (no run reaches 20 characters).
 * A value of a sensitive name is redacted whatever it looks like.
 */
export function looksLikeCredential(value: string): boolean {
  const v = value.trim();
  if (v.length < 8) return false;
  if (AUTH_SCHEME_VALUE.test(v) || JWT_VALUE.test(v) || KNOWN_KEY_VALUE.test(v)) return true;
  if (v.includes('://')) return URL_WITH_USERINFO.test(v) || redactUrl(v) !== v;
  if (v.length < 20 || /\s/.test(v)) return false;
  for (const [run] of v.matchAll(RANDOM_RUN)) if (/\d/.test(run) && /[A-Za-z]/.test(run)) return true;
  return false;
}

export function isSensitiveHeader(name: string, value: string): boolean {
  return SENSITIVE_HEADER_NAME.test(name) || looksLikeCredential(value);
}

/** A header map for display: sensitive values (by name or by value, above) become `[redacted]`. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = isSensitiveHeader(name, value) ? REDACTED : value;
  return out;
}

/**
 * The values of a header map worth scrubbing from text that came back from
 * the server we sent them to: every sensitive value, and its credential
 * without the scheme (`Bearer abc` → also `abc`).
 */
export function headerSecrets(headers: Record<string, string> | undefined): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!isSensitiveHeader(name, value)) continue;
    out.push(value);
    const bare = /^\S+\s+(\S+)$/.exec(value.trim())?.[1];
    if (bare) out.push(bare);
  }
  return out;
}

/* ------------------------------------------------------------------ */
/* URLs                                                                */
/* ------------------------------------------------------------------ */

const QUERY_PAIR = /(^|[&;])([^=&;#]*)=([^&;#]*)/g;

/** A query string (without `?`) with the values of credential-named parameters replaced. */
export function redactQuery(query: string): string {
  if (!mayHoldParam(query)) return query;
  return query.replace(QUERY_PAIR, (whole, sep: string, name: string, value: string) =>
    value && value !== REDACTED && isSensitiveParam(name) ? `${sep}${name}=${REDACTED}` : whole,
  );
}

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i;

/**
 * A URL with its userinfo (`user:pass@`) replaced as a whole and its
 * credential-named query (and fragment) parameters' values replaced:
 * `https://u:p@host/v1?key=abc&alt=sse` → `https://[redacted]@host/v1?key=[redacted]&alt=sse`.
 * Works on the text (no parsing, so nothing else about the URL changes).
 */
export function redactUrl(url: string): string {
  let out = url;
  if (out.includes('@')) out = out.replace(USERINFO, `$1${REDACTED}@`);
  const q = out.search(/[?#]/);
  if (q === -1) return out;
  return out.slice(0, q + 1) + out.slice(q + 1).replace(/[^#]*/g, (part) => redactQuery(part));
}

/**
 * A URL a client sent back after reading it redacted (providers' base_url,
 * MCP endpoints): exactly what we showed for `stored` means "keep it", so the
 * stored URL is returned; any other URL is taken as sent, unless it carries a
 * redaction marker, which then stands for nothing: `undefined` (a 400).
 */
export function keepRedactedUrl(sent: string, stored: string | null | undefined): string | undefined {
  if (stored && sent === redactUrl(stored)) return stored;
  return sent.includes(REDACTED) ? undefined : sent;
}

/**
 * The secrets inside a URL (userinfo and credential-named query values,
 * decoded as well as raw), for `redactSecretValues`.
 */
export function urlSecrets(url: string | null | undefined): string[] {
  if (!url) return [];
  const out: string[] = [];
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\s]*)@/i.exec(url)?.[1];
  if (userinfo) {
    const password = userinfo.split(':').slice(1).join(':');
    out.push(userinfo, safeDecode(userinfo), password, safeDecode(password));
  }
  const q = url.indexOf('?');
  if (q !== -1) {
    for (const m of url.slice(q + 1).matchAll(QUERY_PAIR))
      if (m[3] && isSensitiveParam(m[2]!)) out.push(m[3], safeDecode(m[3]));
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return s;
  }
}

/* ------------------------------------------------------------------ */
/* Known values                                                        */
/* ------------------------------------------------------------------ */

/** Shorter values would be replaced everywhere they happen to occur as ordinary text. */
const MIN_SECRET_LENGTH = 4;

/**
 * Every occurrence of each secret (and of its URL- and JSON-escaped forms)
 * replaced by `[redacted]`, longest first so a secret containing another is
 * replaced whole. Meant for error paths: it costs a scan per secret.
 */
export function redactSecretValues(text: string, secrets: Iterable<string | null | undefined>): string {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s || s.length < MIN_SECRET_LENGTH) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  let out = text;
  for (const s of [...forms].sort((a, b) => b.length - a.length))
    if (out.includes(s)) out = out.replaceAll(s, REDACTED);
  return out;
}

/* ------------------------------------------------------------------ */
/* Patterns in free text                                               */
/* ------------------------------------------------------------------ */

/**
 * Anything below can only match if one of these appears: most texts stop
 * here. Two regexes rather than one: a case-insensitive alternation mixing
 * words with punctuation and case-sensitive prefixes measured 3–6 times
 * slower than the two together (~100 ns for a 45-character span name).
 */
const WORD_HINT = /key|token|secret|pass|pwd|cred|sig|auth|bearer|basic|cookie/i;
const KNOWN_HINT = /sk[-_]|AIza|gh[pousr]_|github_pat_|xox[abprs]-|glpat-|A[KS]IA|hf_|npm_|eyJ|[@%]/;
const mayHoldCredential = (text: string) => WORD_HINT.test(text) || KNOWN_HINT.test(text);

/** `scheme://userinfo@` anywhere. */
const TEXT_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;
/** `name=value` after a start, `?`, `&`, `;`, whitespace, a quote or a bracket; the name decides. */
const TEXT_PAIR = /(^|[?&;\s"'([{,])([\w.%-]+)=([^?&#\s"'<>,;)\]}]+)/g;
/** `"name": "value"` in JSON (or JSON inside a JSON string: `\"name\":\"value\"`); the name decides. */
const TEXT_JSON_PAIR = /(\\?")([\w.-]+)\1(\s*:\s*)\1([^"\\]+)\1/g;
/** `Authorization: Bearer x`, `"x-api-key":"x"`, `cookie=x` … (the scheme, if any, is kept). */
const TEXT_HEADER =
  /\b(authorization|proxy-authorization|x-api-key|x-goog-api-key|api-key|x-auth-token|cookie|set-cookie)(\\?["']?\s*[:=]\s*\\?["']?)((?:bearer|basic|token)\s+)?([^\s"'\\,;}&]+)/gi;
/** An auth scheme and a credential-looking token after it ("Basic authentication" is left alone). */
const TEXT_SCHEME = /\b(bearer|basic|token)(\s+)([\w.~+/=-]{8,})/gi;
/** Well-known key formats; our own virtual keys are `sk-vk-…`. */
const TEXT_KNOWN_KEY =
  /\b(?:sk-[\w-]{16,}|sk_(?:live|test)_[\w]{16,}|AIza[\w-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|xox[abprs]-[\w-]{10,}|glpat-[\w-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,})/g;
const TEXT_JWT = /\beyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/g;

const looksLikeToken = (v: string) => v.length >= 20 || /[\d._~+/=-]/.test(v);

/**
 * Credential-shaped substrings replaced by `[redacted]`: URL userinfo,
 * `name=value` pairs whose name is a credential's (see `isSensitiveParam`),
 * `Authorization`/`Proxy-Authorization`/`X-Api-Key`/`X-Goog-Api-Key`/
 * `Api-Key`/`X-Auth-Token`/`Cookie`/`Set-Cookie` followed by `:` or `=`,
 * JSON `"name": "value"` members whose name is a credential's,
 * `Bearer`/`Basic`/`Token` followed by a token of 8+ characters that has a
 * digit or punctuation (or 20+ characters), the key formats listed at
 * `TEXT_KNOWN_KEY` and JWTs. Text without any hint of these is returned as is.
 */
export function redactText(text: string): string {
  if (!mayHoldCredential(text)) return text;
  let out = text;
  if (out.includes('@')) out = out.replace(TEXT_USERINFO, `$1${REDACTED}@`);
  if (out.includes('=') && mayHoldParam(out))
    out = out.replace(TEXT_PAIR, (whole, pre: string, name: string, value: string) =>
      !value.startsWith('[redacted') && isSensitiveParam(name) ? `${pre}${name}=${REDACTED}` : whole,
    );
  if (out.includes('"'))
    out = out.replace(TEXT_JSON_PAIR, (whole, q: string, name: string, sep: string, value: string) =>
      value !== REDACTED && isSensitiveParam(name) ? `${q}${name}${q}${sep}${q}${REDACTED}${q}` : whole,
    );
  out = out.replace(
    TEXT_HEADER,
    (whole, name: string, sep: string, scheme: string | undefined, value: string) =>
      value.startsWith(REDACTED) ? whole : `${name}${sep}${scheme ?? ''}${REDACTED}`,
  );
  out = out.replace(TEXT_SCHEME, (whole, scheme: string, space: string, value: string) =>
    looksLikeToken(value) && !value.startsWith('[') ? `${scheme}${space}${REDACTED}` : whole,
  );
  out = out.replace(TEXT_KNOWN_KEY, REDACTED);
  if (out.includes('eyJ')) out = out.replace(TEXT_JWT, REDACTED);
  return out;
}

/** `redactText` over an unknown value's strings (objects and arrays, a few levels deep); for error objects in logs. */
export function redactDeep(value: unknown, depth = 4): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, depth - 1);
  return out;
}
