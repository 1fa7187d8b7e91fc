/**
 * Money as the console shows it: a currency sign and enough digits for a
 * single call's cost, the same on the usage page's Cost card and its table.
 */
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { GroupTable } from '../src/features/usage/model-table.js';
import { UsageTotals } from '../src/features/usage/totals.js';
import type { Point } from '../src/features/usage/queries.js';
import { formatUsd } from '../src/lib/money.js';
import { renderPage } from './render.js';

describe('formatUsd', () => {
  it('shows small amounts with two significant digits, cents from a dollar up, and a dollar sign', () => {
    expect(formatUsd(0.000011)).toBe('$0.000011');
    expect(formatUsd(0.0000113)).toBe('$0.000011');
    expect(formatUsd(0.000038)).toBe('$0.000038');
    expect(formatUsd(0.0123)).toBe('$0.0123');
    expect(formatUsd(0.346)).toBe('$0.3460');
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0)).toBe('$0.00');
  });

  it('says so when there is no amount', () => {
    expect(formatUsd(null)).toBe('—');
    expect(formatUsd(undefined, 'no price')).toBe('no price');
  });
});

describe('the usage page', () => {
  it('shows a small cost with the same digits on the Cost card and in the per-model table', () => {
    const point: Point = {
      bucket_start: '2026-03-01T10:00:00.000Z',
      provider: 'openai',
      model: 'gpt-test',
      requests: 1,
      errors: 0,
      input_tokens: 3,
      output_tokens: 1,
      cost_usd: 0.000011,
    };
    renderPage(
      <>
        <UsageTotals
          totals={{ requests: 1, errors: 0, input_tokens: 3, output_tokens: 1, cost_usd: 0.000011 }}
        />
        <GroupTable points={[point]} groupTitle="Model" />
      </>,
    );
    expect(within(screen.getByRole('group', { name: 'Cost' })).getByText('$0.000011')).toBeTruthy();
    const row = screen.getByRole('row', { name: /openai\/gpt-test/ });
    expect(within(row).getAllByRole('cell').at(-1)?.textContent).toBe('$0.000011');
  });
});
