/** What one agent version changed from the one before it, told in a line. */

// Bookkeeping that differs between any two versions and says nothing of what changed.
const IGNORED = new Set(['id', 'version', 'created_at', 'updated_at', 'warnings']);
const SHORT = 32;

const show = (v: unknown) => (v === undefined ? '—' : JSON.stringify(v));

/**
 * The fields whose values differ, each with before → after when both are
 * short (a number, a label), else its name alone; "first version" for the
 * oldest and "same settings" when only bookkeeping changed.
 */
export function changesFrom(
  settings: Record<string, unknown>,
  before: Record<string, unknown> | undefined,
): string {
  if (!before) return 'first version';
  const keys = [...new Set([...Object.keys(settings), ...Object.keys(before)])].filter(
    (k) => !IGNORED.has(k),
  );
  const changed = keys
    .filter((k) => show(settings[k]) !== show(before[k]))
    .map((k) => {
      const [a, b] = [show(before[k]), show(settings[k])];
      return a.length + b.length <= SHORT ? `${k}: ${a} → ${b}` : k;
    });
  return changed.length ? changed.join(', ') : 'same settings';
}
