"""Answering one question against a committed index: query analysis, recall, fusion, features,
rerank and assembly (docs/architecture.md)."""
