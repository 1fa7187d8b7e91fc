import type { Span } from '../../api/types.js';

export interface GenAi {
  model: string | undefined;
  provider: string | undefined;
  operation: string | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  costUsd: number | undefined;
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
const num = (v: unknown) => (v == null || v === '' || Number.isNaN(Number(v)) ? undefined : Number(v));

/** The GenAI semantic-convention attributes of a model call span, or undefined for other spans. */
export function genAi(span: Span): GenAi | undefined {
  const a = (span.attributes ?? {}) as Record<string, unknown>;
  if (!Object.keys(a).some((k) => k.startsWith('gen_ai.'))) return undefined;
  const model = str(a['gen_ai.request.model'] ?? a['gen_ai.response.model']);
  const inputTokens = num(a['gen_ai.usage.input_tokens']);
  const outputTokens = num(a['gen_ai.usage.output_tokens']);
  if (!model && inputTokens === undefined && outputTokens === undefined) return undefined;
  return {
    model,
    provider: str(a['gen_ai.provider.name'] ?? a['gen_ai.system']),
    operation: str(a['gen_ai.operation.name']),
    inputTokens,
    outputTokens,
    costUsd: num(a['gen_ai.usage.cost_usd']),
  };
}
