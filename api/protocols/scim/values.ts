import { invalidValue } from './errors.js';

/** SCIM attribute names are case-insensitive (RFC 7643 §2.1): an object's keys, lower-cased. */
export function lowerKeys(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw invalidValue(`${what} must be an object`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The longest text any SCIM string attribute may be here. */
const MAX_TEXT = 1024;

/** An optional string attribute: undefined when absent, null when null or empty. */
export function optionalText(value: unknown, attribute: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (typeof value !== 'string') throw invalidValue(`${attribute} must be a string`);
  if (value.length > MAX_TEXT) throw invalidValue(`${attribute} is longer than ${MAX_TEXT} characters`);
  return value;
}

/** A required string attribute. */
export function requiredText(value: unknown, attribute: string): string {
  const text = optionalText(value, attribute);
  if (!text || text.trim() === '') throw invalidValue(`${attribute} is required`);
  return text;
}

/** A boolean, also as the strings "True" and "False" some identity providers send (Entra ID does). */
export function booleanOf(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`${attribute} must be true or false`);
}

/**
 * The one email kept: the primary one, else the first (`emails` is a
 * multi-valued attribute; the users table has one address). A bare string
 * is taken as the address (a path such as `emails[type eq "work"].value`).
 */
export function primaryEmail(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return optionalText(value, 'emails.value') ?? null;
  const list = Array.isArray(value) ? value : [value];
  const emails = list.map((e) => lowerKeys(e, 'an entry of emails'));
  const chosen =
    emails.find((e) => e.primary === true || e.primary === 'true' || e.primary === 'True') ?? emails[0];
  return chosen ? (optionalText(chosen.value, 'emails.value') ?? null) : null;
}

/** `name` as a display name: `formatted`, else the given and family names joined. */
export function nameAsDisplayName(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const name = lowerKeys(value, 'name');
  const formatted = optionalText(name.formatted, 'name.formatted');
  if (formatted) return formatted;
  const parts = [
    optionalText(name.givenname, 'name.givenName'),
    optionalText(name.familyname, 'name.familyName'),
  ];
  return parts.filter(Boolean).join(' ') || null;
}
