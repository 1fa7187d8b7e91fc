import { Tabs } from '@mantine/core';
import { useLocation, useNavigate } from 'react-router';

/** The traces area's two pages: the list and the statistics (the window in the URL is kept). */
export function AreaNav() {
  const { pathname, search } = useLocation();
  const navigate = useNavigate();
  const current = pathname.endsWith('/stats') ? 'stats' : 'list';
  const window = new URLSearchParams(search).get('window');
  const keep = window ? `?window=${window}` : '';
  return (
    <Tabs
      value={current}
      onChange={(v) => void navigate(v === 'stats' ? `/traces/stats${keep}` : `/traces${keep}`)}
    >
      <Tabs.List>
        <Tabs.Tab value="list">Traces</Tabs.Tab>
        <Tabs.Tab value="stats">Statistics</Tabs.Tab>
      </Tabs.List>
    </Tabs>
  );
}
