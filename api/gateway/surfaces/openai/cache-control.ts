/**
 * Anthropic's `cache_control` as an extension of Chat Completions, as other
 * gateways accept it: on a content part, on a whole message (its last
 * block), and on a tool. It reaches an Anthropic provider on the matching
 * block; OpenAI and Gemini providers cache prompt prefixes by themselves
 * and do not take it, so it is left out for them.
 */
import { cacheControlProblem } from '../../../../core/llm/cache-control.js';
import { invalidField } from '../../errors.js';
import { isObj, type Obj } from '../json.js';

function check(value: unknown, path: string): void {
  const problem = cacheControlProblem(value);
  if (!problem) return;
  const param = problem.at ? `${path}.${problem.at}` : path;
  throw invalidField(param, `Invalid value for '${param}': ${problem.message}.`);
}

/** Every cache_control of the request is well-formed, or a 400 naming the first that is not. */
export function validateOpenAiCacheControl(body: Obj): void {
  if (Array.isArray(body.messages)) {
    body.messages.forEach((m: unknown, i) => {
      if (!isObj(m)) return;
      if ('cache_control' in m) check(m.cache_control, `messages[${i}].cache_control`);
      if (!Array.isArray(m.content)) return;
      m.content.forEach((p: unknown, j) => {
        if (isObj(p) && 'cache_control' in p)
          check(p.cache_control, `messages[${i}].content[${j}].cache_control`);
      });
    });
  }
  if (Array.isArray(body.tools)) {
    body.tools.forEach((t: unknown, i) => {
      if (isObj(t) && 'cache_control' in t) check(t.cache_control, `tools[${i}].cache_control`);
    });
  }
}

const partHas = (p: unknown) => isObj(p) && 'cache_control' in p;
const messageHas = (m: unknown) =>
  isObj(m) && ('cache_control' in m || (Array.isArray(m.content) && m.content.some(partHas)));

const withoutCacheControl = (o: Obj): Obj => {
  const { cache_control: _dropped, ...rest } = o;
  return rest;
};

function messageWithout(m: unknown): unknown {
  if (!isObj(m) || !messageHas(m)) return m;
  const out = withoutCacheControl(m);
  if (Array.isArray(m.content))
    out.content = m.content.map((p: unknown) => (partHas(p) ? withoutCacheControl(p as Obj) : p));
  return out;
}

/**
 * The body for an OpenAI provider: the extension removed (strict
 * OpenAI-compatible servers refuse unknown fields). Without any, the
 * caller's body itself, after a scan that allocates nothing (this is the
 * same-format hot path).
 */
export function stripOpenAiCacheControl(body: Obj): Obj {
  const messages = Array.isArray(body.messages) && body.messages.some(messageHas) ? body.messages : undefined;
  const tools = Array.isArray(body.tools) && body.tools.some(partHas) ? body.tools : undefined;
  if (!messages && !tools) return body;
  return {
    ...body,
    ...(messages ? { messages: messages.map(messageWithout) } : {}),
    ...(tools ? { tools: tools.map((t: unknown) => (partHas(t) ? withoutCacheControl(t as Obj) : t)) } : {}),
  };
}
