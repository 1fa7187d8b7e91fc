/** One colour per service name, the same on every page. */
const KNOWN: Record<string, string> = {
  'agent-server-api': 'blue',
  'agent-server-worker': 'teal',
  'agent-server-gateway': 'grape',
};
const PALETTE = ['orange', 'cyan', 'pink', 'lime', 'indigo', 'yellow', 'violet', 'green', 'red'];

export function serviceColour(service: string | undefined): string {
  const name = service ?? '';
  const known = KNOWN[name];
  if (known) return known;
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return PALETTE[h % PALETTE.length]!;
}

export const colourVar = (c: string, shade = 6) => `var(--mantine-color-${c}-${shade})`;
