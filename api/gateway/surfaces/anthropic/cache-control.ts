/**
 * `cache_control` on the Anthropic surface. To an Anthropic provider the
 * body goes as received, breakpoints included; where Anthropic allows them
 * (which block types, how many) is the vendor's to say. The gateway checks
 * only that each value is well-formed, so a malformed one is refused before
 * anything is counted, whichever provider the model resolves to (OpenAI and
 * Gemini providers do not take breakpoints: translation leaves them out).
 */
import { cacheControlProblem } from '../../../../core/llm/cache-control.js';
import { invalidField } from '../../errors.js';
import { isObj, type Obj } from '../json.js';

function check(value: unknown, path: string): void {
  const problem = cacheControlProblem(value);
  if (!problem) return;
  const param = problem.at ? `${path}.${problem.at}` : path;
  throw invalidField(param, `${param}: ${problem.message}`);
}

function checkBlocks(blocks: unknown, path: string): void {
  if (!Array.isArray(blocks)) return;
  blocks.forEach((b: unknown, i) => {
    if (!isObj(b)) return;
    if ('cache_control' in b) check(b.cache_control, `${path}.${i}.cache_control`);
    // A tool result's own content blocks (Anthropic refuses breakpoints there, but only a well-formed one gets that far).
    if (b.type === 'tool_result') checkBlocks(b.content, `${path}.${i}.content`);
  });
}

/** Every cache_control of a Messages request is well-formed, or a 400 naming the first that is not. */
export function validateAnthropicCacheControl(body: Obj): void {
  // The request-level one: Anthropic places it on the last cacheable block itself.
  if ('cache_control' in body) check(body.cache_control, 'cache_control');
  checkBlocks(body.system, 'system');
  if (Array.isArray(body.messages))
    body.messages.forEach((m: unknown, i) => {
      if (isObj(m)) checkBlocks(m.content, `messages.${i}.content`);
    });
  checkBlocks(body.tools, 'tools');
}
