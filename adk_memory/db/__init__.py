"""Database layer: URLs, engines, the embedded server and migrations. Knows nothing of ADK."""
