/**
 * Why the memory store cannot embed: the project's store embedding model
 * cannot be called as configured (gone, no serving provider, a provider
 * that has no embeddings, not granted to the project's key). Retrying cannot
 * help: the routes answer 400, a memory tool tells the model.
 */
export class StoreEmbeddingError extends Error {
  override name = 'StoreEmbeddingError';
}
