"""Building and keeping the index of one workspace: list, load, chunk, store, and the derived
lexical and vector indexes (docs/architecture.md)."""
