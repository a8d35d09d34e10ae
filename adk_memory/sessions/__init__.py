"""ADK sessions on PostgreSQL: the service, its SQL, its JSON codec and PII redaction."""
