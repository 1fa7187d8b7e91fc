import { SegmentedControl, useMantineColorScheme, type MantineColorScheme } from '@mantine/core';

const CHOICES: Array<{ value: MantineColorScheme; label: string }> = [
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
  { value: 'auto', label: 'System' },
];

/**
 * Light, dark, or following the system. Mantine keeps the choice in this
 * browser's localStorage, so it is remembered across tabs and reloads.
 */
export function ColorSchemeToggle() {
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <SegmentedControl
      aria-label="Colour scheme"
      size="xs"
      value={colorScheme}
      onChange={setColorScheme}
      data={CHOICES}
    />
  );
}
