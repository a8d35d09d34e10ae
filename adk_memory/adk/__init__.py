"""Everything that touches ADK's runtime: tools, callbacks, plugins, URI schemes, configuration."""
