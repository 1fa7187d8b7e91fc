import { Button, Group, SegmentedControl } from '@mantine/core';
import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';

export interface TimeWindow {
  start_time: string;
  end_time: string;
}

const WINDOWS: Record<string, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 24 * 3_600_000,
};

/**
 * A time window kept in the URL (`?window=1h`), anchored at the moment it was
 * chosen or refreshed, so the query key stays put between renders.
 */
export function useTimeWindow(fallback = '24h') {
  const [params, setParams] = useSearchParams();
  const key = params.get('window') && WINDOWS[params.get('window')!] ? params.get('window')! : fallback;
  const [anchor, setAnchor] = useState(() => Date.now());
  const window = useMemo<TimeWindow>(
    () => ({
      start_time: new Date(anchor - WINDOWS[key]!).toISOString(),
      end_time: new Date(anchor).toISOString(),
    }),
    [anchor, key],
  );
  const choose = (next: string) => {
    setAnchor(Date.now());
    setParams(
      (p) => {
        const n = new URLSearchParams(p);
        n.set('window', next);
        n.delete('offset');
        return n;
      },
      { replace: true },
    );
  };
  const control = (
    <Group gap="xs">
      <SegmentedControl
        aria-label="Time window"
        size="xs"
        value={key}
        onChange={choose}
        data={Object.keys(WINDOWS).map((w) => ({ value: w, label: `Last ${w}` }))}
      />
      <Button size="xs" variant="default" onClick={() => setAnchor(Date.now())}>
        Refresh
      </Button>
    </Group>
  );
  return { window, control };
}
