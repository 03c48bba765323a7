"""``ecc-memory-mcp``: the vault as four MCP tools over stdio (``server``)."""
