import { randomBytes } from 'node:crypto';

/**
 * The Responses API's items as the gateway keeps them: every input item
 * normalised (string content as parts, an id on each), so a stored
 * conversation reads back as the same items and lists with ids.
 */

export interface TextPart {
  type: 'input_text' | 'output_text';
  text: string;
  annotations?: unknown[];
}

export interface ImagePart {
  type: 'input_image';
  /** A URL or a `data:` URL. */
  image_url: string;
  detail: 'auto' | 'low' | 'high';
}

export type MessageRole = 'user' | 'assistant' | 'system' | 'developer';

export interface MessageItem {
  id: string;
  type: 'message';
  role: MessageRole;
  status?: ItemStatus;
  content: Array<TextPart | ImagePart>;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  call_id: string;
  name: string;
  /** JSON text, as the model produced it. */
  arguments: string;
  status: ItemStatus;
}

export interface FunctionCallOutputItem {
  id: string;
  type: 'function_call_output';
  call_id: string;
  output: string;
  status?: ItemStatus;
}

export type Item = MessageItem | FunctionCallItem | FunctionCallOutputItem;
/** What a response produces: assistant messages and function calls. */
export type OutputItem = MessageItem | FunctionCallItem;

/** An id in OpenAI's style: a type prefix and random hex (`resp_…`, `msg_…`, `fc_…`). */
export const newId = (prefix: string, bytes = 16): string =>
  `${prefix}_${randomBytes(bytes).toString('hex')}`;

/** Ids the gateway makes for responses; anything else names no stored response. */
export const RESPONSE_ID = /^resp_[0-9a-f]{48}$/;
export const newResponseId = (): string => newId('resp', 24);

export function outputMessage(id: string, text: string, status: ItemStatus): MessageItem {
  return {
    id,
    type: 'message',
    role: 'assistant',
    status,
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}
