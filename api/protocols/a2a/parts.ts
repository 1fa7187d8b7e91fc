import type { Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { ValidationError } from '../../../core/errors.js';
import { converseMessage } from '../../schemas/converse.schemas.js';

type Content = string | Array<Record<string, unknown>>;

/**
 * One A2A part as a converse content part: text as text, structured data as
 * its JSON text (the model reads it), an image (by URL or inline bytes) as an
 * image. Other files are refused: the turn has nothing to read them with.
 */
function contentPart(part: Part, i: number): Record<string, unknown> {
  const c = part.content;
  const media = part.mediaType.toLowerCase();
  switch (c?.$case) {
    case 'text':
      return { type: 'text', text: c.value };
    case 'data':
      return { type: 'text', text: JSON.stringify(c.value ?? null) };
    case 'url':
      if (media.startsWith('image/') || (!media && /^https?:\/\//i.test(c.value)))
        return { type: 'image_url', image_url: { url: c.value } };
      break;
    case 'raw':
      if (media.startsWith('image/'))
        return {
          type: 'image_url',
          image_url: { url: `data:${media};base64,${c.value.toString('base64')}` },
        };
      break;
    default:
      throw ValidationError.field(
        `message.parts.${i}`,
        `message.parts.${i} has no text, data, url or raw content`,
      );
  }
  throw new ContentTypeNotSupportedError({
    message: `message.parts.${i}: "${part.mediaType || 'a file without mediaType'}" is not accepted; send text, data or an image`,
    metadata: { field: `message.parts.${i}` },
  });
}

/** A client message's parts as the converse message (one text part stays a string), checked as converse checks it. */
export function converseContent(parts: Part[]): Content {
  if (!parts.length)
    throw ValidationError.field('message.parts', 'message.parts must hold at least one part', 'array.min');
  const items = parts.map(contentPart);
  const content: Content = items.length === 1 && items[0]!.type === 'text' ? String(items[0]!.text) : items;
  const { error } = converseMessage.validate(content);
  if (error) throw ValidationError.field('message.parts', `message.parts: ${error.message}`, 'any.invalid');
  return content;
}
