import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type { EmbeddingRequest, EmbeddingResponse, ProviderFormat } from '../../../../core/llm/types.js';
import { invalidRequest } from '../../errors.js';
import { isObj, str, type Obj } from '../json.js';

/** One `embedContent` request's text, refusing fields the target cannot honour (taskType, title). */
function textOf(req: Obj, where: string, target: ProviderFormat): { text: string; dimensions?: number } {
  for (const key of Object.keys(req)) {
    if (!['content', 'outputDimensionality', 'model'].includes(key))
      throw new UnsupportedFeatureError(`${where}${key}`, target);
  }
  const parts = isObj(req.content) && Array.isArray(req.content.parts) ? (req.content.parts as Obj[]) : [];
  if (parts.length === 0) throw invalidRequest(`* ${where}content: content is not specified`);
  const dimensions = typeof req.outputDimensionality === 'number' ? req.outputDimensionality : undefined;
  return { text: parts.map((p) => str(p.text)).join(''), dimensions };
}

/** `:embedContent` (one text) or `:batchEmbedContents` (`requests`, as @google/genai sends). */
export function parseGeminiEmbedding(body: Obj, model: string, target: ProviderFormat): EmbeddingRequest {
  const requests = Array.isArray(body.requests) ? (body.requests as Obj[]) : undefined;
  const items = requests
    ? requests.map((r, i) => textOf(r, `requests[${i}].`, target))
    : [textOf(body, '', target)];
  return { model, input: items.map((i) => i.text), dimensions: items[0]?.dimensions };
}

export function renderGeminiEmbedding(res: EmbeddingResponse, body: Obj): unknown {
  if (Array.isArray(body.requests)) return { embeddings: res.embeddings.map((values) => ({ values })) };
  return { embedding: { values: res.embeddings[0] ?? [] } };
}
