import { describe, expect, it } from 'vitest';
import {
  headerSecrets,
  looksLikeCredential,
  redactHeaders,
  redactQuery,
  redactSecretValues,
  redactText,
  redactUrl,
  urlSecrets,
} from '../../../core/security/redact.js';

describe('redactQuery / redactUrl', () => {
  it('replaces the values of credential-named parameters and nothing else', () => {
    expect(redactQuery('alt=sse&key=abc123')).toBe('alt=sse&key=[redacted]');
    expect(redactQuery('api_key=a&apiKey=b&x-goog-api-key=c&access_token=d&client_secret=e&sig=f')).toBe(
      'api_key=[redacted]&apiKey=[redacted]&x-goog-api-key=[redacted]&access_token=[redacted]&client_secret=[redacted]&sig=[redacted]',
    );
    expect(redactQuery('X-Amz-Signature=a&X-Amz-Credential=b&password=c&auth=d')).toBe(
      'X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&password=[redacted]&auth=[redacted]',
    );
    // Encoded names are judged decoded.
    expect(redactQuery('%6Bey=abc')).toBe('%6Bey=[redacted]');
    for (const q of ['alt=sse', 'limit=50&offset=0', 'max_tokens=5&author=me', 'key=', ''])
      expect(redactQuery(q)).toBe(q);
  });

  it('replaces userinfo as a whole and redacts query and fragment credentials, leaving the rest untouched', () => {
    expect(redactUrl('https://user:p@ss@host.test:8443/v1?key=abc&alt=sse#access_token=t')).toBe(
      'https://[redacted]@host.test:8443/v1?key=[redacted]&alt=sse#access_token=[redacted]',
    );
    expect(redactUrl('https://TOKEN@host/x')).toBe('https://[redacted]@host/x');
    for (const u of ['https://api.openai.com/v1', 'http://127.0.0.1:9/mcp?team=blue', 'http://h/a@b'])
      expect(redactUrl(u)).toBe(u);
    expect(urlSecrets('https://u:p%40ss@h/v1?key=abc&alt=sse')).toEqual(
      expect.arrayContaining(['u:p%40ss', 'p%40ss', 'p@ss', 'abc']),
    );
    expect(urlSecrets('https://h/v1?alt=sse')).toEqual([]);
  });
});

describe('headers', () => {
  it('redacts by name or by value, and shows plain values', () => {
    expect(
      redactHeaders({
        Authorization: 'x',
        'X-Auth': 'hunter2',
        'X-Session-Id': 'abc',
        Cookie: 'a=b',
        'X-Forward': 'Bearer abcdefgh',
        'X-Basic': 'Basic dXNlcjpwYXNz',
        'X-Jwt': 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln',
        'X-Openai': 'sk-proj-abcdefghijklmnop',
        'X-Github': 'ghp_abcdefghijklmnopqrstu',
        'X-Random': 'a8f5f167f44f4964e6c998dee827110c',
        'X-Base64': 'dGhpcyBpcyBhIHNlY3JldCB0b2tlbg==',
        'X-Uuid': '123e4567-e89b-12d3-a456-426614174000',
        'X-Hook': 'https://bot:pw@hooks.example/x',
        'X-Signed': 'https://files.example/o?X-Amz-Signature=abc',
        'X-Tenant': 'acme',
        'X-Region': 'eu-west-1',
        Accept: 'application/json',
        'X-Site': 'https://example.com/some/long/path/2024',
        'X-Note': 'hello world and more words than twenty',
      }),
    ).toEqual({
      Authorization: '[redacted]',
      'X-Auth': '[redacted]',
      'X-Session-Id': '[redacted]',
      Cookie: '[redacted]',
      'X-Forward': '[redacted]',
      'X-Basic': '[redacted]',
      'X-Jwt': '[redacted]',
      'X-Openai': '[redacted]',
      'X-Github': '[redacted]',
      'X-Random': '[redacted]',
      'X-Base64': '[redacted]',
      'X-Uuid': '123e4567-e89b-12d3-a456-426614174000',
      'X-Hook': '[redacted]',
      'X-Signed': '[redacted]',
      'X-Tenant': 'acme',
      'X-Region': 'eu-west-1',
      Accept: 'application/json',
      'X-Site': 'https://example.com/some/long/path/2024',
      'X-Note': 'hello world and more words than twenty',
    });
    expect(looksLikeCredential('plainwordswithoutdigitsatall')).toBe(false);
    expect(looksLikeCredential(`plain-123e4567-e89b-12d3-a456-426614174000`)).toBe(false);
    expect(looksLikeCredential('release-2024-06-01-build-7')).toBe(false);
  });

  it('lists the sensitive values, with the credential of a scheme on its own', () => {
    expect(headerSecrets({ Authorization: 'Bearer tok123', 'X-Tenant': 'acme', 'X-Auth': 'pw' })).toEqual([
      'Bearer tok123',
      'tok123',
      'pw',
    ]);
  });
});

describe('redactSecretValues', () => {
  it('replaces each secret, longest first, also URL- and JSON-escaped, and skips very short ones', () => {
    const key = 'k3y/with+chars"';
    const text = `raw ${key} url ${encodeURIComponent(key)} json ${JSON.stringify(key)} pre abc`;
    expect(redactSecretValues(text, [key, 'ab', undefined, null])).toBe(
      'raw [redacted] url [redacted] json "[redacted]" pre abc',
    );
    expect(redactSecretValues('Bearer tok12345', ['tok12345', 'Bearer tok12345'])).toBe('[redacted]');
  });
});

describe('redactText', () => {
  it.each([
    ['GET https://u:pw@h.test/x failed', 'GET https://[redacted]@h.test/x failed'],
    ['url=http://h/?key=abc&alt=sse', 'url=http://h/?key=[redacted]&alt=sse'],
    ['alt=json&key=wrong123', 'alt=json&key=[redacted]'],
    ['invalid api_key=abc given', 'invalid api_key=[redacted] given'],
    ['Authorization: Bearer abc.def-123', 'Authorization: Bearer [redacted]'],
    ['{"x-api-key":"q123","team":"blue"}', '{"x-api-key":"[redacted]","team":"blue"}'],
    ['{\\"authorization\\":\\"Bearer q123\\"}', '{\\"authorization\\":\\"[redacted]\\"}'],
    ['{"api_key": "q123", "n": 1}', '{"api_key": "[redacted]", "n": 1}'],
    ['x-goog-api-key: AIzaSyA1234567890abcdefghijklmnopqrstu', 'x-goog-api-key: [redacted]'],
    ['got token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl', 'got token [redacted]'],
    ['key sk-vk-AbCdEfGhIjKlMnOpQrStUv is revoked', 'key [redacted] is revoked'],
    ['aws AKIAIOSFODNN7EXAMPLE', 'aws [redacted]'],
    ['proxy said Basic dXNlcjpwYXNzd29yZA==', 'proxy said Basic [redacted]'],
  ])('%s', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each([
    '/api/gateway/openai/v1/chat/completions',
    'select * from "virtual_keys" where "key_hash" = $1 limit $2',
    'Basic authentication failed',
    'Token limit exceeded',
    'max_tokens=100 input_tokens=5',
    'the risk-assessment-of-the-model task',
    'mail me@example.com',
    'trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7',
    'authorization=[redacted] tenant=acme',
  ])('leaves %s alone', (input) => {
    expect(redactText(input)).toBe(input);
  });
});
