import type { ToolCall } from '../../core/llm/types.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import { validateStructured } from './structured-output.js';
import { planToolCalls, type RunTools } from './tools.js';
import type { TurnPlan } from './types.js';

/** What the workflow does after a model's answer: run its tool calls, ask again for valid output, or finish. */
export function stepResult(
  plan: TurnPlan,
  tools: RunTools,
  text: string,
  toolCalls: ToolCall[],
): ModelStepResult {
  if (toolCalls.length)
    return {
      kind: 'tool_calls',
      count: toolCalls.length,
      maxIterations: plan.max_iterations,
      calls: planToolCalls(tools, toolCalls),
      approvalTimeoutMs: plan.approval_timeout_ms ?? null,
    };
  if (plan.schema) {
    const checked = validateStructured(plan.schema.schema, text);
    if (!checked.ok) return { kind: 'invalid_output', errors: checked.errors };
  }
  return { kind: 'final' };
}
