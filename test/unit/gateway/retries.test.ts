import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../core/llm/errors.js';
import type { DbProvider } from '../../../core/db/tables/index.js';
import type { Candidate } from '../../../api/gateway/models.js';
import { toGatewayError, withRetriesAndFallbacks } from '../../../api/gateway/upstream.js';

const candidate = (name: string): Candidate => ({ provider: { id: name, name } as DbProvider, model: 'm' });
const OPTS = { retries: 2, baseDelayMs: 1, maxDelayMs: 50 };
const signal = new AbortController().signal;

function scripted(failures: Record<string, UpstreamError[]>) {
  const calls: string[] = [];
  const attempt = (c: Candidate) => {
    calls.push(c.provider.name);
    const err = failures[c.provider.name]?.shift();
    return err ? Promise.reject(err) : Promise.resolve(c.provider.name);
  };
  return { calls, attempt };
}

describe('withRetriesAndFallbacks', () => {
  it('retries 429/5xx on the same provider, then answers', async () => {
    const s = scripted({
      a: [new UpstreamError(503, 'a: busy', true), new UpstreamError(429, 'a: slow', true, 0)],
    });
    const r = await withRetriesAndFallbacks([candidate('a')], s.attempt, OPTS, signal);
    expect(r.value).toBe('a');
    expect(s.calls).toEqual(['a', 'a', 'a']);
  });

  it('never retries a 4xx, nor falls back on one', async () => {
    const s = scripted({ a: [new UpstreamError(400, 'a: bad', false)] });
    await expect(
      withRetriesAndFallbacks([candidate('a'), candidate('b')], s.attempt, OPTS, signal),
    ).rejects.toThrow('a: bad');
    expect(s.calls).toEqual(['a']);
  });

  it('a Retry-After longer than the longest backoff moves straight to the fallback', async () => {
    const s = scripted({ a: [new UpstreamError(429, 'a: later', true, 60_000)] });
    const r = await withRetriesAndFallbacks([candidate('a'), candidate('b')], s.attempt, OPTS, signal);
    expect(r.candidate.provider.name).toBe('b');
    expect(s.calls).toEqual(['a', 'b']);
  });

  it('when every candidate fails retryably, the last failure is what the caller sees', async () => {
    const busy = (n: string) => Array.from({ length: 3 }, () => new UpstreamError(502, `${n}: down`, true));
    const s = scripted({ a: busy('a'), b: busy('b') });
    await expect(
      withRetriesAndFallbacks([candidate('a'), candidate('b')], s.attempt, OPTS, signal),
    ).rejects.toThrow('b: down');
    expect(s.calls).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
  });
});

describe('toGatewayError', () => {
  it("an upstream 401 is the provider's credential problem, so the caller sees a 502", () => {
    expect(toGatewayError(new UpstreamError(401, 'p: invalid api key', false)).status).toBe(502);
  });
  it('an unknown error shows no internals', () => {
    expect(toGatewayError(new Error('secret detail')).message).toBe('Internal server error');
  });
});
