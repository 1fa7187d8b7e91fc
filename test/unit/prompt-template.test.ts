import { describe, expect, it } from 'vitest';
import { renderTemplate, TemplateSyntaxError, validateTemplate } from '../../core/prompts/prompt-template.js';

describe('validateTemplate', () => {
  it('returns the variables in first-use order, once each', () => {
    expect(validateTemplate('Hi {{name}}, you are {{ role }} in {{org.name}}. Bye {{name}}')).toEqual([
      'name',
      'role',
      'org.name',
    ]);
    expect(validateTemplate('no placeholders')).toEqual([]);
  });

  it('accepts JSON examples made of single braces', () => {
    expect(validateTemplate('Answer like {"a": {"b": 1}} for {{user}}')).toEqual(['user']);
    expect(validateTemplate('{"name": {{name}}}')).toEqual(['name']);
    expect(validateTemplate('a lone } or { is text')).toEqual([]);
  });

  it.each([
    ['unclosed placeholder', 'Hello {{name', /unclosed "\{\{" at offset 6/],
    ['unclosed after a good one', '{{a}} and {{b', /unclosed/],
    ['stray closing braces', 'Hello name}}', /unmatched "\}\}" at offset 10/],
    ['empty placeholder', 'Hello {{}}', /invalid variable name/],
    ['name starting with a digit', '{{1abc}}', /invalid variable name "1abc"/],
    ['name with a dash', '{{first-name}}', /invalid variable name/],
    ['name with a space inside', '{{first name}}', /invalid variable name/],
    ['triple braces', '{{{name}}}', /invalid variable name/],
  ])('rejects %s', (_label, template, message) => {
    expect(() => validateTemplate(template)).toThrow(TemplateSyntaxError);
    expect(() => validateTemplate(template)).toThrow(message);
  });
});

describe('renderTemplate', () => {
  it('fills variables, trims whitespace in braces and stringifies non-strings', () => {
    const out = renderTemplate('{{ greeting }}, {{name}}! n={{n}} ok={{ok}} tags={{tags}}', {
      greeting: 'Hello',
      name: 'Ada',
      n: 3,
      ok: false,
      tags: ['a', 'b'],
    });
    expect(out).toEqual({ text: 'Hello, Ada! n=3 ok=false tags=["a","b"]', missing: [] });
  });

  it('renders missing and null variables empty and reports each once', () => {
    expect(renderTemplate('[{{a}}|{{b}}|{{a}}|{{c}}]', { b: 'B', c: null })).toEqual({
      text: '[|B||]',
      missing: ['a', 'c'],
    });
  });

  it('walks dotted names into nested objects, preferring an exact key', () => {
    expect(renderTemplate('{{user.name}}', { user: { name: 'nested' } }).text).toBe('nested');
    expect(renderTemplate('{{user.name}}', { 'user.name': 'exact', user: { name: 'nested' } }).text).toBe(
      'exact',
    );
    expect(renderTemplate('{{user.age}}', { user: { name: 'x' } })).toEqual({
      text: '',
      missing: ['user.age'],
    });
    // Inherited properties are not variables.
    expect(renderTemplate('{{toString}}', {})).toEqual({ text: '', missing: ['toString'] });
  });

  it('keeps text without placeholders intact, JSON braces included', () => {
    const t = 'Reply as {"answer": {"text": "…"}}\nThanks';
    expect(renderTemplate(t, {})).toEqual({ text: t, missing: [] });
  });

  it('throws on a malformed template rather than guessing', () => {
    expect(() => renderTemplate('{{oops', {})).toThrow(TemplateSyntaxError);
  });
});
