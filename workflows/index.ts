/**
 * Every workflow the worker registers. Workflow code runs in Temporal's
 * deterministic sandbox: import activities as types only, no Node built-ins
 * (lint enforces it), no I/O.
 *
 * The session workflow (one per agent + conversation) is added by the durable
 * sessions work; until then the worker registers none of its own.
 */
export {};
