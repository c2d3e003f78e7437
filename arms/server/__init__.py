"""The reference memory server: the neuromorphic engine behind REST and MCP (docs/live.md)."""
