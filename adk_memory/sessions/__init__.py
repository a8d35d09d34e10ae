"""ADK sessions on PostgreSQL: the service, its SQL and its JSON codec."""
