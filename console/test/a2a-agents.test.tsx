/** The A2A agent form: the API's field errors under their inputs, and the body it sends. */
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { A2aForm } from '../src/features/config/a2a/a2a-form.js';
import { describedBy, input } from './dom.js';
import { answer, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const PATH = '/api/agent-server/a2a-agents';

describe('the A2A agent form', () => {
  it("shows the API's message for the card URL under its input", async () => {
    answer(`POST ${PATH}`, invalid({ card_url: '"card_url" must be a valid uri' }));
    const user = userEvent.setup();
    renderPage(<A2aForm projectId="p-1" onDone={() => {}} />);
    await user.type(input('Name'), 'billing');
    await user.type(input('Agent card URL'), 'nope');
    await user.click(screen.getByRole('button', { name: 'Create A2A agent' }));
    const url = input('Agent card URL');
    await waitFor(() => expect(url.getAttribute('aria-invalid')).toBe('true'));
    expect(describedBy(url)).toMatch(/"card_url" must be a valid uri/);
  });

  it('sends the name and card URL trimmed, with no headers when none are given', async () => {
    let done = false;
    answer(`POST ${PATH}`, ok({ id: 'a-1' }));
    const user = userEvent.setup();
    renderPage(<A2aForm projectId="p-1" onDone={() => (done = true)} />);
    await user.type(input('Name'), ' billing ');
    await user.type(input('Agent card URL'), 'https://agent.example/.well-known/agent-card.json ');
    await user.click(screen.getByRole('button', { name: 'Create A2A agent' }));
    await waitFor(() => expect(done).toBe(true));
    const sent = requests.filter((r) => r.method === 'POST' && r.path === PATH).map((r) => r.body);
    expect(sent).toEqual([
      {
        name: 'billing',
        card_url: 'https://agent.example/.well-known/agent-card.json',
        headers: {},
        // No OAuth unless asked for: headers only.
        oauth: null,
        per_user_tokens: false,
      },
    ]);
  });
});
