"""The MCP server: Code Evidence for coding agents (``code-evidence mcp``). It needs the MCP
SDK, the ``mcp`` extra (``pip install 'code-evidence[mcp]'``); ``tools.py`` and
``workspace.py`` do not import it, ``server.py`` does."""
