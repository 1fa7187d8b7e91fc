import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';

describe('request body and HTTP timeout settings', () => {
  it('have defaults', () => {
    expect(loadConfig({}).http).toEqual({
      headersTimeoutMs: 30_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 65_000,
      bodyIdleTimeoutMs: 10_000,
      bodyBytesInFlightMax: 64 * 1024 * 1024,
    });
  });

  it('keep room for one largest body by default, and refuse less', () => {
    const big = String(100 * 1024 * 1024);
    expect(loadConfig({ MAX_BODY_BYTES: big }).http.bodyBytesInFlightMax).toBe(100 * 1024 * 1024);
    expect(() =>
      loadConfig({ MAX_BODY_BYTES: big, BODY_BYTES_IN_FLIGHT_MAX: String(64 * 1024 * 1024) }),
    ).toThrow(/BODY_BYTES_IN_FLIGHT_MAX .* must be at least MAX_BODY_BYTES/);
  });

  it('refuse a headers timeout longer than the request timeout, and durations out of range', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '2000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS \(5000\) must not exceed HTTP_REQUEST_TIMEOUT_MS \(2000\)/,
    );
    expect(() => loadConfig({ BODY_IDLE_TIMEOUT_MS: '10' })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' })).toThrow(/HTTP_KEEP_ALIVE_TIMEOUT_MS/);
  });
});
