"""Keeping an index current while a host runs: file watching and debouncing, for the language
server now and the MCP server next."""
