import { UnsupportedFeatureError } from '../../../../activities/llm/errors.js';
import type {
  EmbeddingRequest,
  EmbeddingResponse,
  ProviderFormat,
} from '../../../../activities/llm/types.js';
import { invalidRequest } from '../../errors.js';

export function parseGeminiEmbedding(
  body: Record<string, unknown>,
  model: string,
  target: ProviderFormat,
): EmbeddingRequest {
  for (const key of Object.keys(body)) {
    if (!['content', 'outputDimensionality', 'model'].includes(key))
      throw new UnsupportedFeatureError(key, target);
  }
  const content = body.content as { parts?: Array<{ text?: unknown }> } | undefined;
  if (!content?.parts?.length)
    throw invalidRequest('* EmbedContentRequest.content: content is not specified');
  const text = content.parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  return { model, input: [text], dimensions: body.outputDimensionality as number | undefined };
}

export function renderGeminiEmbedding(res: EmbeddingResponse): unknown {
  return { embedding: { values: res.embeddings[0] ?? [] } };
}
