"""Model providers: chat and embeddings, offline or over an OpenAI-compatible API."""
