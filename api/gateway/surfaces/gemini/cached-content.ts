/**
 * Gemini's explicit context cache: `cachedContent` names content the caller
 * cached at Google beforehand. It passes through to a Gemini provider as
 * received; no other vendor can read it, so to an OpenAI or Anthropic
 * provider it is a 400 naming the field (parseGeminiRequest), never dropped
 * (the cached content is part of the prompt).
 */
import { invalidField } from '../../errors.js';
import type { Obj } from '../json.js';

/** `cachedContents/{id}` (a resource path ending so is accepted too). */
const CACHED_CONTENT_NAME = /(^|\/)cachedContents\/[^/\s]+$/;

export function validateGeminiCachedContent(body: Obj): void {
  const name = body.cachedContent;
  if (name === undefined) return;
  if (typeof name !== 'string' || !CACHED_CONTENT_NAME.test(name))
    throw invalidField(
      'cachedContent',
      "Invalid value at 'cachedContent': must be the name of a cached content, cachedContents/{id}",
    );
}
