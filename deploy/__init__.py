"""Cloud Run deployment of an ADK agent on adk-memory: the app, the memory worker and the
migration job, all configured from one set of environment variables (see deploy/README.md)."""
