import type { EmbeddingRequest, EmbeddingResponse } from '../../types.js';

export function toOpenAiEmbedding(req: EmbeddingRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: req.model, input: req.input };
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  return body;
}

export function fromOpenAiEmbedding(raw: unknown, model: string): EmbeddingResponse {
  const body = raw as {
    model?: string;
    data?: Array<{ index: number; embedding: number[] }>;
    usage?: { prompt_tokens?: number };
  };
  const data = [...(body.data ?? [])].sort((a, b) => a.index - b.index);
  return {
    model: body.model ?? model,
    embeddings: data.map((d) => d.embedding),
    usage: { input_tokens: body.usage?.prompt_tokens ?? 0 },
  };
}
