"""Long-term memory on PostgreSQL + pgvector: scopes, the store, retrieval, embeddings."""
