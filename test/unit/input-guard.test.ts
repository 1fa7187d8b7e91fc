import type { Context } from 'koa';
import { describe, expect, it, vi } from 'vitest';
import { findUnstorable, MAX_JSON_DEPTH, unstorable } from '../../api/http/input-guard.js';
import { errorHandler } from '../../api/middleware/error-handler.js';

/** Built as text: JSON.stringify itself overflows the stack on such values. */
const nested = (depth: number, leaf = '1') =>
  JSON.parse(`${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`) as unknown;

describe('unstorable', () => {
  it('names NUL and lone surrogates, and nothing else', () => {
    expect(unstorable('a\u0000b')).toBe('string.nul');
    expect(unstorable('\ud800x')).toBe('string.surrogate');
    expect(unstorable('x\udc00')).toBe('string.surrogate');
    expect(unstorable('\udc00\ud800')).toBe('string.surrogate'); // a pair in the wrong order
    expect(unstorable('ok 😀 \ud83d\ude00 \u0001 \uffff \u{10ffff}')).toBeUndefined();
    expect(unstorable('')).toBeUndefined();
  });
});

describe('findUnstorable', () => {
  it('names each bad string by its dotted path, at any depth, in arrays too', () => {
    const problems = findUnstorable(
      { name: 'a\u0000b', ok: 'fine', parameters: { stop: ['x', '\ud800'], nested: { deeper: '\u0000' } } },
      'body',
    );
    expect(problems).toEqual([
      { field: 'name', message: 'name must not contain a NUL character', type: 'string.nul' },
      {
        field: 'parameters.stop.1',
        message: 'parameters.stop.1 must not contain an unpaired surrogate (not valid Unicode)',
        type: 'string.surrogate',
      },
      {
        field: 'parameters.nested.deeper',
        message: 'parameters.nested.deeper must not contain a NUL character',
        type: 'string.nul',
      },
    ]);
  });

  it('a bad key names the object holding it; the root is named by its location', () => {
    expect(findUnstorable({ context: { ok: { 'a\u0000': 1 } } }, 'body').map((p) => p.field)).toEqual([
      'context.ok',
    ]);
    expect(findUnstorable({ '\ud800': 1 }, 'query').map((p) => p.field)).toEqual(['query']);
    expect(findUnstorable('\u0000', 'body').map((p) => p.field)).toEqual(['body']);
  });

  it(`refuses nesting past ${MAX_JSON_DEPTH} levels, naming the top-level field once`, () => {
    // The body is level 1: 63 more levels are the limit.
    expect(findUnstorable({ parameters: nested(62, '{}') }, 'body')).toEqual([]);
    expect(findUnstorable({ parameters: nested(63, '{}') }, 'body')).toEqual([
      {
        field: 'parameters',
        message: `parameters is nested more than ${MAX_JSON_DEPTH} levels deep`,
        type: 'object.depth',
      },
    ]);
    const wide = { a: [nested(100), nested(100)], b: nested(1_000_000) };
    expect(findUnstorable(wide, 'body').map((p) => p.field)).toEqual(['a', 'b']);
    const deepArray = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(findUnstorable(deepArray, 'body').map((p) => p.field)).toEqual(['body']);
  });

  it('reports at most 20 problems', () => {
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, '\u0000']));
    expect(findUnstorable(many, 'body')).toHaveLength(20);
  });

  it('leaves clean input alone, numbers, booleans and nulls included', () => {
    expect(findUnstorable({ a: [1, true, null, { b: 'ü 😀' }], c: '' }, 'body')).toEqual([]);
  });
});

describe('errorHandler for errors that reach it despite validation', () => {
  async function handle(err: Error) {
    const log = { error: vi.fn(), warn: vi.fn() };
    const ctx = { path: '/api/agent-server/projects', state: { log, requestId: 'r' } } as unknown as Context;
    await errorHandler()(ctx, () => Promise.reject(err));
    return { status: ctx.status, body: ctx.body, log };
  }

  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it.each([
    ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
    ['22P05', 'unsupported Unicode escape sequence'],
    ['22P02', 'invalid input syntax for type json'],
  ])('Postgres %s (unstorable text) is a 400 envelope, logged as a warning', async (code, message) => {
    const { status, body, log } = await handle(pgError(code, message));
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    expect(log.error).not.toHaveBeenCalled();
    expect(log.warn).toHaveBeenCalledOnce();
  });

  it('another invalid text representation (a server bug) stays a 500', async () => {
    const { status, log } = await handle(pgError('22P02', 'invalid input syntax for type uuid: "x"'));
    expect(status).toBe(500);
    expect(log.error).toHaveBeenCalledOnce();
  });

  it("the router's 501 keeps its status, with its own message, and is not logged as a failure", async () => {
    const { status, body, log } = await handle(Object.assign(new Error('Not Implemented'), { status: 501 }));
    expect(status).toBe(501);
    expect(body).toEqual({
      error: true,
      message: 'Not implemented',
      data: {},
      status: 501,
      errorDetails: {},
    });
    expect(log.error).not.toHaveBeenCalled();
  });

  it('any other framework 5xx is still a logged 500', async () => {
    const { status, log } = await handle(Object.assign(new Error('boom'), { status: 503 }));
    expect(status).toBe(500);
    expect(log.error).toHaveBeenCalledOnce();
  });
});
