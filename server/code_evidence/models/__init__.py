"""The shipped neural models (bi-encoder embedder, cross-encoder) and the embedding cache; the
model files live in the folders beside these modules."""
