import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { isSensitiveHeader, isSensitiveParam, REDACTED, redactText } from '../security/redact.js';
import { ATTR } from './attributes.js';

/**
 * The last line of defence before a span is stored or exported (docs/security.md#what-is-redacted-where):
 * every string in its name, attributes (ours and the instrumentations', e.g.
 * undici's and http's `url.full`), status message and event attributes
 * (`exception.message`, `exception.stacktrace`) goes through `redactText`.
 * Known secrets are removed where they are known (the provider key from
 * upstream errors, MCP header values); this catches credential-shaped text
 * nobody knew about. An attribute whose key names a credential (a captured
 * `http.request.header.authorization`, anything ending in `.api_key`,
 * `.token`…) is replaced whole, whatever its value. A span with nothing to
 * redact is passed on as is, and most strings are dismissed by one cheap test.
 */
export function redactSpan<S extends ReadableSpan>(span: S): S {
  const name = redactText(span.name);
  const attributes = redactAttributes(span.attributes);
  const events = redactEvents(span.events);
  const message = span.status.message;
  const statusMessage = message ? redactText(message) : message;
  if (
    name === span.name &&
    attributes === span.attributes &&
    events === span.events &&
    statusMessage === message
  )
    return span;
  // A view over the span: what it does not override (ids, times, resource…) is read through.
  return Object.assign(Object.create(span) as S, {
    name,
    attributes,
    events,
    status: statusMessage === message ? span.status : { ...span.status, message: statusMessage },
  });
}

/** Strings, and strings inside arrays (header-list attributes); anything else as it is. */
function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (!Array.isArray(value)) return value;
  let out: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    if (typeof v !== 'string') continue;
    const r = redactText(v);
    if (r !== v) (out ??= [...(value as unknown[])])[i] = r;
  }
  return out ?? value;
}

/**
 * Attributes whose values we or the instrumentations set from a closed set
 * (methods, schemes, route templates, addresses, our own ids): not worth
 * the scan, which is most of redaction's cost on a span.
 */
const CLOSED_VALUES = new Set<string>([
  'http.request.method',
  'http.route',
  'url.scheme',
  'network.protocol.version',
  'client.address',
  'server.address',
  'error.type',
  'db.system',
  'db.system.name',
  'db.namespace',
  'db.operation.name',
  'gen_ai.operation.name',
  'gen_ai.system',
  'gen_ai.provider.name',
  ATTR.projectId,
  ATTR.agentId,
  ATTR.conversationId,
  ATTR.virtualKeyId,
]);

type KeyRule = 'skip' | 'secret' | 'scan';
/** Attribute keys are few (ours and the conventions'): each is judged once. */
const keyRules = new Map<string, KeyRule>();

function ruleFor(key: string): KeyRule {
  let rule = keyRules.get(key);
  if (rule === undefined) {
    const header = /^http\.(?:request|response)\.header\.(.+)$/.exec(key)?.[1];
    rule = CLOSED_VALUES.has(key)
      ? 'skip'
      : (
            header !== undefined
              ? isSensitiveHeader(header, '')
              : isSensitiveParam(key.slice(key.lastIndexOf('.') + 1))
          )
        ? 'secret'
        : 'scan';
    if (keyRules.size < 10_000) keyRules.set(key, rule);
  }
  return rule;
}

const secretValue = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(() => REDACTED) : typeof value === 'string' ? REDACTED : value;

/** The same object when nothing changed (the common case: no copy). */
function redactAttributes(attributes: Attributes): Attributes {
  let out: Attributes | undefined;
  for (const key in attributes) {
    const rule = ruleFor(key);
    if (rule === 'skip') continue;
    const value = attributes[key];
    const redacted = rule === 'secret' ? secretValue(value) : redactValue(value);
    if (redacted !== value) (out ??= { ...attributes })[key] = redacted;
  }
  return out ?? attributes;
}

function redactEvents(events: TimedEvent[]): TimedEvent[] {
  let out: TimedEvent[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (!e.attributes) continue;
    const attributes = redactAttributes(e.attributes);
    if (attributes !== e.attributes) (out ??= [...events])[i] = { ...e, attributes };
  }
  return out ?? events;
}
