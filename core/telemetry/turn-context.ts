import { context, createContextKey, type Attributes, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import { ATTR } from './attributes.js';

/**
 * What spans inherit from the context they start in. An agent turn's ids are
 * known where the turn's work starts (the converse request, each activity),
 * not where its spans are made (a query, an HTTP call, a model call deep in a
 * library): the context carries them, and every span started in it is
 * stamped when it starts (`stampInherited`, called by the span processor). So
 * the trace list's project, agent and conversation filters find every span
 * of a turn, failed turns included.
 */
const INHERITED = createContextKey('agent-server.inherited-attributes');
const RECORD_CONTENT = createContextKey('agent-server.record-content');

/** A turn of a session: whose it is, and whether its project records content. */
export interface TurnScope {
  projectId: string;
  agentId: string;
  conversationId: string;
  /** The project's `record_content`. */
  recordContent: boolean;
}

/** A context whose new spans carry `attributes` (unless they set the same keys themselves). */
export function withInheritedAttributes(ctx: Context, attributes: Attributes): Context {
  const prior = ctx.getValue(INHERITED) as Attributes | undefined;
  return ctx.setValue(INHERITED, prior ? { ...prior, ...attributes } : attributes);
}

/** The ids of a turn as span attributes. */
export function turnAttributes(
  turn: Pick<TurnScope, 'projectId' | 'agentId' | 'conversationId'>,
): Attributes {
  return {
    [ATTR.projectId]: turn.projectId,
    [ATTR.agentId]: turn.agentId,
    [ATTR.conversationId]: turn.conversationId,
  };
}

/** Temporal's search attributes of a session workflow that name its turn, and our attribute keys for them. */
const SEARCH_ATTRIBUTES: ReadonlyArray<[string, string]> = [
  ['ProjectId', ATTR.projectId],
  ['AgentId', ATTR.agentId],
  ['ConversationId', ATTR.conversationId],
];

/**
 * The turn's ids from the typed search attributes a session workflow is
 * started with (pairs of `{ key: { name }, value }`); undefined when they do
 * not name all three (not a session).
 */
export function turnAttributesOf(typed: unknown): Attributes | undefined {
  const pairs = Array.isArray(typed) ? (typed as Array<{ key?: { name?: unknown }; value?: unknown }>) : [];
  const out: Attributes = {};
  for (const [name, key] of SEARCH_ATTRIBUTES) {
    const value = pairs.find((p) => p.key?.name === name)?.value;
    if (typeof value !== 'string') return undefined;
    out[key] = value;
  }
  return out;
}

/** A context inside a turn: its spans carry the turn's ids, and content is recorded as its project says. */
export function withTurn(ctx: Context, turn: TurnScope): Context {
  return withInheritedAttributes(ctx, turnAttributes(turn)).setValue(RECORD_CONTENT, turn.recordContent);
}

/** OTEL_RECORD_CONTENT, the server-wide switch (set when telemetry is installed). */
let everywhere = false;

export function recordContentEverywhere(on: boolean): void {
  everywhere = on;
}

/**
 * Whether prompts, completions, tool arguments and results are recorded on
 * spans started now: always with OTEL_RECORD_CONTENT=true (the server-wide
 * switch), otherwise as the turn's project says; never outside a turn.
 */
export function recordsContent(ctx: Context = context.active()): boolean {
  return everywhere || ctx.getValue(RECORD_CONTENT) === true;
}

/** Called by the span processor when a span starts: the attributes its context carries. */
export function stampInherited(span: Span, parentContext: Context): void {
  const inherited = parentContext.getValue(INHERITED) as Attributes | undefined;
  if (!inherited) return;
  for (const key in inherited) if (span.attributes[key] === undefined) span.setAttribute(key, inherited[key]);
}

/**
 * Workflow spans are made inside the workflow sandbox, where no context of
 * ours exists; Temporal's sink hands them over with the workflow's info as
 * attributes, search attributes included. A session workflow's project,
 * agent and conversation (search attributes the converse request sets) are
 * copied to our keys.
 */
export function stampWorkflowSpan(span: ReadableSpan): void {
  const attributes = span.attributes as Record<string, unknown>;
  const search = attributes.searchAttributes as Record<string, unknown> | undefined;
  if (!search || typeof search !== 'object') return;
  for (const [name, key] of SEARCH_ATTRIBUTES) {
    const values = search[name];
    const value: unknown = Array.isArray(values) ? (values as unknown[])[0] : undefined;
    if (typeof value === 'string' && attributes[key] === undefined) attributes[key] = value;
  }
}
