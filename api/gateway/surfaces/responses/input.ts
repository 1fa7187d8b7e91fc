import { invalidField } from '../../errors.js';
import { isObj, type Obj } from '../json.js';
import { notSupported } from './errors.js';
import {
  newId,
  type ImagePart,
  type Item,
  type MessageItem,
  type MessageRole,
  type TextPart,
} from './items.js';

/**
 * `input` of a Responses request → normalised items. Every problem is a 400
 * naming the field (`input[2].content[0].text`), in OpenAI's wording; item
 * types with no translation (references to stored items, reasoning, hosted
 * tools' calls, files) are refused rather than dropped.
 */

const ROLES = new Set<MessageRole>(['user', 'assistant', 'system', 'developer']);
const DETAILS = new Set(['auto', 'low', 'high']);

const missing = (param: string) => invalidField(param, `Missing required parameter: '${param}'.`);
const badType = (param: string, expected: string) =>
  invalidField(param, `Invalid type for '${param}': expected ${expected}.`);

function string(o: Obj, key: string, at: string, { empty = true } = {}): string {
  const v = o[key];
  if (v === undefined || v === null) throw missing(`${at}.${key}`);
  if (typeof v !== 'string') throw badType(`${at}.${key}`, 'a string');
  if (!empty && v === '') throw invalidField(`${at}.${key}`, `Invalid '${at}.${key}': empty string.`);
  return v;
}

function part(p: unknown, role: MessageRole, at: string): TextPart | ImagePart {
  if (!isObj(p)) throw badType(at, 'an object');
  switch (p.type) {
    case 'input_text':
    case 'output_text': {
      const text = string(p, 'text', at);
      // An assistant turn replayed as input is the model's own text, whichever tag the caller used.
      return role === 'assistant'
        ? { type: 'output_text', text, annotations: [] }
        : { type: 'input_text', text };
    }
    case 'input_image': {
      if (role !== 'user') throw notSupported(at, `An image in a ${role} message`);
      if (p.file_id != null && p.image_url == null)
        throw notSupported(`${at}.file_id`, 'An image by file_id', 'send image_url');
      const detail = p.detail ?? 'auto';
      if (typeof detail !== 'string' || !DETAILS.has(detail))
        throw invalidField(`${at}.detail`, `Invalid value for '${at}.detail': expected auto, low or high.`);
      return {
        type: 'input_image',
        image_url: string(p, 'image_url', at),
        detail: detail as ImagePart['detail'],
      };
    }
    case undefined:
      throw missing(`${at}.type`);
    default:
      throw notSupported(`${at}.type`, `A content part of type ${JSON.stringify(p.type)}`);
  }
}

function message(o: Obj, at: string): MessageItem {
  const role = o.role;
  if (role === undefined) throw missing(`${at}.role`);
  if (typeof role !== 'string' || !ROLES.has(role as MessageRole))
    throw invalidField(
      `${at}.role`,
      `Invalid value for '${at}.role': expected one of user, assistant, system, developer.`,
    );
  const r = role as MessageRole;
  const content = o.content;
  let parts: MessageItem['content'];
  if (typeof content === 'string')
    parts = [
      r === 'assistant'
        ? { type: 'output_text', text: content, annotations: [] }
        : { type: 'input_text', text: content },
    ];
  else if (Array.isArray(content)) parts = content.map((p, i) => part(p, r, `${at}.content[${i}]`));
  else if (content === undefined || content === null) throw missing(`${at}.content`);
  else throw badType(`${at}.content`, 'a string or an array of content parts');
  return { id: itemId(o, 'msg', at), type: 'message', role: r, content: parts };
}

/** The caller's id when it gave one (a replayed output item keeps its own), else a new one. */
function itemId(o: Obj, prefix: string, at: string): string {
  if (o.id === undefined || o.id === null) return newId(prefix);
  if (typeof o.id !== 'string' || o.id === '') throw badType(`${at}.id`, 'a non-empty string');
  return o.id;
}

/** A function result: a string, or text parts (joined); images and files in results have no translation. */
function callOutput(o: Obj, at: string): string {
  const out = o.output;
  if (typeof out === 'string') return out;
  if (out === undefined || out === null) throw missing(`${at}.output`);
  if (!Array.isArray(out)) throw badType(`${at}.output`, 'a string or an array of input_text parts');
  return out
    .map((p: unknown, i) => {
      const where = `${at}.output[${i}]`;
      if (!isObj(p)) throw badType(where, 'an object');
      if (p.type !== 'input_text')
        throw notSupported(`${where}.type`, `A function output part of type ${JSON.stringify(p.type)}`);
      return string(p, 'text', where);
    })
    .join('');
}

function item(raw: unknown, at: string): Item {
  if (!isObj(raw)) throw badType(at, 'an object');
  // An easy input message ({role, content}) has no type.
  const type = raw.type ?? (raw.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      return message(raw, at);
    case 'function_call':
      return {
        id: itemId(raw, 'fc', at),
        type: 'function_call',
        call_id: string(raw, 'call_id', at, { empty: false }),
        name: string(raw, 'name', at, { empty: false }),
        arguments: string(raw, 'arguments', at),
        status: 'completed',
      };
    case 'function_call_output':
      return {
        id: itemId(raw, 'fco', at),
        type: 'function_call_output',
        call_id: string(raw, 'call_id', at, { empty: false }),
        output: callOutput(raw, at),
        status: 'completed',
      };
    case 'item_reference':
      throw notSupported(at, 'A reference to a stored item', 'use previous_response_id');
    case undefined:
      throw missing(`${at}.type`);
    default:
      throw notSupported(`${at}.type`, `An input item of type ${JSON.stringify(type)}`);
  }
}

/** `input`: a string (one user message) or an array of items; absent is no items. */
export function parseInput(raw: unknown): Item[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string')
    return [
      { id: newId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: raw }] },
    ];
  if (!Array.isArray(raw)) throw badType('input', 'a string or an array of input items');
  return raw.map((it, i) => item(it, `input[${i}]`));
}
