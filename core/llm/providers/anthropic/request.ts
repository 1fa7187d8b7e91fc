import { UnsupportedFeatureError } from '../../errors.js';
import type { CacheControl, ContentPart, LlmRequest } from '../../types.js';

/** Anthropic requires max_tokens; the other formats do not, so a missing one gets this. */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

/** The block with its cache breakpoint, when the caller set one (Anthropic takes it on every block type used here). */
const cached = (block: Block, cc: CacheControl | undefined): Block =>
  cc ? { ...block, cache_control: cc } : block;

function toBlock(p: ContentPart): Block {
  if (p.type === 'text') return cached({ type: 'text', text: p.text }, p.cache_control);
  return cached(
    {
      type: 'image',
      source:
        p.source.kind === 'url'
          ? { type: 'url', url: p.source.url }
          : { type: 'base64', media_type: p.source.media_type, data: p.source.data },
    },
    p.cache_control,
  );
}

/** Blocks when a breakpoint or the session's extra system messages need them, else the plain string. */
function systemOf(req: LlmRequest): string | Block[] | undefined {
  if (!req.system_blocks?.length && !req.extra_system?.length) return req.system || undefined;
  const blocks: Block[] = req.system_blocks?.length
    ? req.system_blocks.map(toBlock)
    : req.system
      ? [{ type: 'text', text: req.system }]
      : [];
  for (const text of req.extra_system ?? []) if (text) blocks.push({ type: 'text', text });
  return blocks;
}

function parseArguments(args: string): unknown {
  try {
    return args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return {};
  }
}

/** Internal → Messages API body. Tool results become user turns; same-role neighbours are merged. */
export function toAnthropicRequest(req: LlmRequest, stream: boolean): Record<string, unknown> {
  const turns: Turn[] = [];
  const push = (role: Turn['role'], blocks: Block[]) => {
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const m of req.messages) {
    if (m.role === 'tool') {
      const block: Block = { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content };
      if (m.is_error) block.is_error = true;
      push('user', [cached(block, m.cache_control)]);
    } else if (m.role === 'user') {
      push('user', m.content.map(toBlock));
    } else {
      const blocks = m.content.filter((p) => p.type !== 'text' || p.text !== '').map(toBlock);
      for (const c of m.tool_calls ?? []) {
        blocks.push(
          cached(
            { type: 'tool_use', id: c.id, name: c.name, input: parseArguments(c.arguments) },
            c.cache_control,
          ),
        );
      }
      push('assistant', blocks);
    }
  }
  const body: Record<string, unknown> = {
    model: req.model,
    max_tokens: req.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: turns,
  };
  const system = systemOf(req);
  if (system !== undefined) body.system = system;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) =>
      cached(
        {
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          input_schema: t.parameters,
        },
        t.cache_control,
      ),
    );
  }
  const tc = req.tool_choice;
  let choice: Record<string, unknown> | undefined;
  if (tc === 'auto' || tc === 'none') choice = { type: tc };
  else if (tc === 'required') choice = { type: 'any' };
  else if (tc) choice = { type: 'tool', name: tc.name };
  if (req.parallel_tool_calls === false)
    choice = { type: 'auto', ...choice, disable_parallel_tool_use: true };
  if (choice) body.tool_choice = choice;
  if (req.response_format && req.response_format.type !== 'text') {
    throw new UnsupportedFeatureError(`response_format ${req.response_format.type}`, 'anthropic');
  }
  if (req.stop?.length) body.stop_sequences = req.stop;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (stream) body.stream = true;
  return body;
}
