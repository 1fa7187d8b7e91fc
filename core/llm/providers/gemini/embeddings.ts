import type { EmbeddingRequest, EmbeddingResponse } from '../../types.js';

/** batchEmbedContents body: one request per input. */
export function toGeminiEmbedding(req: EmbeddingRequest): Record<string, unknown> {
  return {
    requests: req.input.map((text) => ({
      model: `models/${req.model}`,
      content: { parts: [{ text }] },
      ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
    })),
  };
}

/** Accepts both the batch and the single (`embedContent`) answer. Gemini reports no token count. */
export function fromGeminiEmbedding(raw: unknown, model: string): EmbeddingResponse {
  const body = raw as { embeddings?: Array<{ values: number[] }>; embedding?: { values: number[] } };
  const list = body.embeddings ?? (body.embedding ? [body.embedding] : []);
  return { model, embeddings: list.map((e) => e.values), usage: { input_tokens: 0 } };
}
