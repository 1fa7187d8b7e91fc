/**
 * A sub-agent listed with `requires_approval` on the real stack (API,
 * Temporal dev server, worker, PostgreSQL; only the vendor is scripted): the
 * caller's turn waits for a person before the sub-agent runs; approved, the
 * sub-agent's turn runs and the caller answers with it; rejected, no
 * sub-agent run is made and the model hears why.
 */
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../../helpers/factories.js';
import type { Script } from '../../fixtures/vendors/scripted-server.js';
import { useSessionWorld, waitFor, type RunData } from './session-harness.js';

interface RunView extends RunData {
  pending_approvals: Array<{ id: string; name: string; arguments: string }>;
  sub_agent_runs?: Array<{ run_id: string; agent_id: string; status: string }>;
}
type Body = { messages?: Array<{ role: string; content: string | null }> };

const systemOf = (body: Body) => body.messages?.find((m) => m.role === 'system')?.content ?? '';
const toolResults = (body: Body) =>
  (body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('sub-agents that need approval', () => {
  const world = useSessionWorld();
  const api = () => world.fx.api;
  const view = async (runId: string) =>
    (await api().request<RunView>('GET', `/api/agent-server/runs/${runId}`)).body.data;

  /** A lead whose one sub-agent (the auditor) needs approval; both answered by prompt. */
  async function leadAndAuditor() {
    const auditorName = uniqueName('auditor');
    const auditor = await world.fx.agent({ name: auditorName }, 'You are the auditor.');
    const lead = await world.fx.agent(
      { name: uniqueName('lead'), sub_agents: [{ agent_id: auditor.id, requires_approval: true }] },
      'You are the lead.',
    );
    const tool = `agent__${auditorName}`;
    const plans: Record<string, { first: Script; then?: (results: string[]) => Script }> = {
      'You are the lead.': {
        first: { reply: { tool_calls: [{ name: tool, arguments: { message: 'audit the books' } }] } },
        then: (results) => ({ reply: { text: `Audit: ${results[0]}` } }),
      },
      'You are the auditor.': { first: { reply: { text: 'all in order' } } },
    };
    world.fx.vendor.respond = (body) => {
      const plan = plans[systemOf(body)];
      if (!plan) return undefined;
      const results = toolResults(body);
      return results.length && plan.then ? plan.then(results) : plan.first;
    };
    return { lead, auditor, tool };
  }

  async function paused(leadId: string, tool: string) {
    const res = await world.fx.converse({ agent_id: leadId, message: 'check the books' });
    expect(res.status, res.text).toBe(200);
    const runId = res.body.data.run_id;
    const run = await waitFor(async () => {
      const r = await view(runId);
      return r.status === 'awaiting_approval' ? r : undefined;
    });
    expect(run.pending_approvals).toEqual([
      expect.objectContaining({ name: tool, arguments: JSON.stringify({ message: 'audit the books' }) }),
    ]);
    // Nothing ran for the sub-agent while the call waits.
    expect(run.sub_agent_runs ?? []).toEqual([]);
    return run;
  }

  it('approved: the sub-agent runs and the caller answers with what it said', async () => {
    const { lead, auditor, tool } = await leadAndAuditor();
    const run = await paused(lead.id, tool);
    const done = await api().request<RunView>('POST', `/api/agent-server/runs/${run.run_id}/approvals`, {
      approved_call_ids: [run.pending_approvals[0]!.id],
      wait: true,
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'completed', output: { content: 'Audit: all in order' } });
    expect((await view(run.run_id)).sub_agent_runs).toEqual([
      expect.objectContaining({ agent_id: auditor.id, status: 'completed' }),
    ]);
  }, 60_000);

  it('rejected: no sub-agent run is made and the model hears the call was not run', async () => {
    const { lead, tool } = await leadAndAuditor();
    const run = await paused(lead.id, tool);
    const done = await api().request<RunView>('POST', `/api/agent-server/runs/${run.run_id}/approvals`, {
      rejected_call_ids: [run.pending_approvals[0]!.id],
      wait: true,
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.status).toBe('completed');
    expect(done.body.data.output?.content).toBe('Audit: declined by user');
    expect((await view(run.run_id)).sub_agent_runs ?? []).toEqual([]);
  }, 60_000);

  it('requires_approval must be a boolean: 400 naming the field', async () => {
    const auditor = await world.fx.agent({ name: uniqueName('auditor') });
    const bad = await api().request('POST', `/api/agent-server/agents?project_id=${world.fx.projectId}`, {
      name: uniqueName('lead'),
      model_id: world.fx.modelId,
      prompt_id: auditor.promptId,
      sub_agents: [{ agent_id: auditor.id, requires_approval: 'sometimes' }],
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.errorDetails)).toContain('sub_agents.0.requires_approval');
  });
});
