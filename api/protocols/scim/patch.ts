import { invalidValue, ScimError } from './errors.js';
import { lowerKeys } from './values.js';

/** One operation of a PatchOp (RFC 7644 §3.5.2), its op lower-cased (Entra ID sends "Replace"). */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  /** Lower-cased, without the resource's core schema URN; undefined for the value-object form. */
  path: string | undefined;
  value: unknown;
}

/** The operations of a PatchOp body, checked for form (what each path means is the resource's). */
export function operationsOf(body: unknown, coreSchema: string): PatchOperation[] {
  const patch = lowerKeys(body, 'the PatchOp');
  if (!Array.isArray(patch.operations) || patch.operations.length === 0)
    throw new ScimError(400, 'invalidSyntax', 'Operations must be a non-empty array');
  return patch.operations.map((raw) => {
    const o = lowerKeys(raw, 'an operation');
    const op = typeof o.op === 'string' ? o.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw new ScimError(400, 'invalidSyntax', 'op must be add, replace or remove');
    if (o.path !== undefined && typeof o.path !== 'string')
      throw new ScimError(400, 'invalidPath', 'path must be a string');
    const path = o.path === undefined || o.path.trim() === '' ? undefined : pathOf(o.path, coreSchema);
    if (path === undefined && op === 'remove') throw new ScimError(400, 'noTarget', 'remove needs a path');
    if (path === undefined && (!o.value || typeof o.value !== 'object' || Array.isArray(o.value)))
      throw invalidValue(`${op} without a path needs an object of attributes as its value`);
    return { op, path, value: o.value };
  });
}

/** A path as compared here: lower-cased, and an attribute of the core schema named without its URN. */
export function pathOf(path: string, coreSchema: string): string {
  const lower = path.trim().toLowerCase();
  const prefix = `${coreSchema.toLowerCase()}:`;
  return lower.startsWith(prefix) ? lower.slice(prefix.length) : lower;
}

/**
 * The value-object form (no path) as one operation per attribute: Okta and
 * Entra ID send `{"op": "replace", "value": {"active": false}}`, Entra ID
 * also with dotted keys (`"name.givenName"`).
 */
export function perAttribute(operation: PatchOperation, coreSchema: string): PatchOperation[] {
  if (operation.path !== undefined) return [operation];
  return Object.entries(operation.value as Record<string, unknown>).map(([key, value]) => ({
    op: operation.op,
    path: pathOf(key, coreSchema),
    value,
  }));
}

/** Attributes a client may never set: the server's own. */
export function refuseReadOnly(path: string): void {
  const attribute = path.split(/[.[]/)[0]!;
  if (attribute === 'id' || attribute === 'meta' || attribute === 'schemas')
    throw new ScimError(400, 'mutability', `${attribute} cannot be changed`);
}
