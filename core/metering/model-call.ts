/**
 * One metered model call, the same for the gateway and agent sessions: the
 * key admits it (limits and budget, its worst case reserved), a GenAI span
 * records it, and settling charges the key what the vendor reported, prices
 * the span and completes the usage row. A call without a key (an agent turn
 * in a project without one) is priced and logged all the same: one price,
 * one figure for its span, its usage row and its run.
 */
import { context, trace, type Context } from '@opentelemetry/api';
import type { ProviderFormat, Usage } from '../llm/types.js';
import { startModelCallSpan, type ModelCallSpan } from '../telemetry/genai.js';
import type { GatewayPolicyService } from './gateway-policy.js';
import type { Admission, AdmitRequest, Charge, KeylessCall, MeteredKey } from './types.js';

/** Thrown when a request is nested too deeply to be measured (JSON.parse took it; recursion overflows). */
export class InputTooDeepError extends Error {
  override name = 'InputTooDeepError';
  constructor() {
    super('request body is nested too deeply');
  }
}

/**
 * Prompt tokens before the call, without a tokenizer: about four characters
 * per token of what is sent. Only the reservation uses it; what is charged
 * is what the provider reports.
 */
export function estimateInputTokens(sent: unknown): number {
  let json: string;
  try {
    json = JSON.stringify(sent) ?? '';
  } catch (err) {
    if (err instanceof RangeError) throw new InputTooDeepError();
    throw err;
  }
  return Math.ceil(json.length / 4);
}

/** What is known of a model call before it is sent. */
export interface ModelCallRequest {
  provider: { id: string; name: string; type: ProviderFormat };
  model: string;
  operation: 'chat' | 'embed';
  stream: boolean;
  /** The caller's output limit per choice, when it gave one (otherwise the model's ceiling is reserved). */
  maxOutputTokens?: number | undefined;
  /** Choices the vendor writes and bills (OpenAI's `n`, Gemini's `candidateCount`), when more than one may be. */
  choices?: number | undefined;
  /** The request as sent, for the input estimate. */
  sent: unknown;
  /** The prompt, for the span (recorded only when content recording is on). */
  input: unknown;
  /** The session making the call, for the span. */
  session?: { projectId: string; agentId: string; conversationId: string };
}

/** How the call ended. */
export interface CallOutcome {
  /** The HTTP status of the answer: 200, the vendor's or the gateway's error, 499 when the caller left. */
  status: number;
  /** As the provider reported it; undefined when it reported none. */
  usage?: Usage | undefined;
  responseModel?: string | undefined;
  finishReasons?: string[];
  /** The answer, for the span (recorded only when content recording is on). */
  output?: unknown;
  /** Why it failed (status ≥ 400), for the span; `errorType` labels it (default: the error's name, else the status). */
  error?: unknown;
  errorType?: string;
}

/**
 * A settled call: its cost (undefined when no price is known or the vendor
 * reported no usage), and when its usage is stored.
 */
export interface SettledCall {
  costUsd: number | undefined;
  /** The usage row is stored (or given up on after the policy's wait). */
  logged: Promise<void>;
  /** Counters too: the key's budget and minute window hold the actual cost and tokens. */
  settled: Promise<void>;
}

/** One admitted model call: run the vendor request in `context()`, then `settle` it once. */
export class MeteredCall {
  private settledCall: SettledCall | undefined;

  constructor(
    private readonly policy: GatewayPolicyService,
    readonly span: ModelCallSpan,
    /** Keyless when no key meters the call (a session of a project without a virtual key). */
    readonly admission: Admission | KeylessCall,
  ) {}

  /** The context the vendor request runs in: the call's span active, so it is the request's parent. */
  context(parent: Context = context.active()): Context {
    return trace.setSpan(parent, this.span.span);
  }

  /**
   * Charges the call (the key, if any, and the usage row) and ends the span
   * with the cost charged, so both carry one figure. A keyed success whose
   * usage the vendor did not report is charged its whole reservation (the
   * budget must never be under-counted), and its span and run get no cost:
   * what it really cost is unknown. A second settle returns the first's result.
   */
  settle(outcome: CallOutcome): SettledCall {
    if (this.settledCall) return this.settledCall;
    const charged = this.policy.settle(this.admission, this.charge(outcome));
    const known = outcome.usage && this.admission.price;
    const cost = known ? charged.costUsd : undefined;
    this.endSpan(outcome, cost);
    this.settledCall = {
      costUsd: cost,
      logged: charged.logged,
      settled: charged.settled.then(() => undefined),
    };
    return this.settledCall;
  }

  private endSpan(outcome: CallOutcome, cost: number | undefined): void {
    const { usage } = outcome;
    if (usage?.cache_read_tokens)
      this.span.span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cache_read_tokens);
    if (usage?.cache_write_tokens)
      this.span.span.setAttribute('gen_ai.usage.cache_creation.input_tokens', usage.cache_write_tokens);
    const result = {
      ...(outcome.responseModel ? { responseModel: outcome.responseModel } : {}),
      ...(usage ? { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } : {}),
      ...(outcome.finishReasons ? { finishReasons: outcome.finishReasons } : {}),
      ...(cost !== undefined ? { costUsd: cost } : {}),
      ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    };
    if (outcome.status < 400) return this.span.end(result);
    const { error, errorType } = outcome;
    if (error === undefined)
      this.span.fail(new Error(`HTTP ${outcome.status}`), errorType ?? String(outcome.status), result);
    else this.span.fail(error, errorType, result);
  }

  /**
   * What the call is charged: what the vendor reported; without a report, a
   * keyed success its reservation, anything else nothing (a keyless call
   * has no budget to protect, and its run records no tokens either).
   */
  private charge(outcome: CallOutcome): Charge {
    const adm = this.admission;
    const { usage, status } = outcome;
    const charged =
      usage ??
      (adm.key && status < 400
        ? { input_tokens: adm.request.inputTokens, output_tokens: adm.reservedOutputTokens }
        : { input_tokens: 0, output_tokens: 0 });
    return {
      inputTokens: charged.input_tokens,
      outputTokens: charged.output_tokens,
      cacheReadTokens: usage?.cache_read_tokens,
      cacheWriteTokens: usage?.cache_write_tokens,
      status,
      traceId: this.span.span.spanContext().traceId,
    };
  }
}

/**
 * Starts metered calls: admits against the key (throwing the refusals of
 * core/metering/errors.ts and reservation.ts) or, without one, looks up the
 * model's price, then opens the span and the provisional usage row.
 * Refusals are not model calls: they have no span.
 */
export class ModelCallMeter {
  constructor(
    private readonly policy: GatewayPolicyService,
    /**
     * Store each call's usage row while it goes upstream (the gateway, whose
     * answer's last bytes wait for the row: see GatewayPolicyService.startUsage).
     * Without, settling writes the final row (agent sessions, whose turn
     * records its cost once the row is in).
     */
    private readonly provisionalRows = false,
  ) {}

  async start(key: MeteredKey | undefined, request: ModelCallRequest): Promise<MeteredCall> {
    const asked: AdmitRequest = {
      providerId: request.provider.id,
      providerName: request.provider.name,
      model: request.model,
      inputTokens: estimateInputTokens(request.sent),
      // An embedding writes no output tokens.
      maxOutputTokens: request.operation === 'embed' ? 0 : request.maxOutputTokens,
      choices: request.choices,
    };
    const admission = key ? await this.policy.admit(key, asked) : await this.policy.keyless(asked);
    const span = startModelCallSpan({
      system: request.provider.type,
      model: request.model,
      operation: request.operation === 'embed' ? 'embeddings' : 'chat',
      ...(request.session ?? {}),
      ...(key ? { virtualKeyId: key.id } : {}),
      stream: request.stream,
      ...(request.maxOutputTokens !== undefined ? { maxTokens: request.maxOutputTokens } : {}),
      input: request.input,
    });
    if (admission.key && this.provisionalRows)
      this.policy.startUsage(admission, span.span.spanContext().traceId);
    return new MeteredCall(this.policy, span, admission);
  }
}
