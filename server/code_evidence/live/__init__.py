"""Keeping a workspace's index fresh while the user works, for any long-lived host.

``watch`` turns file-system events into debounced batches; ``passes`` turns batches, editor
buffers and requests into index passes on one worker thread and reports through a small
interface. Neither knows which shell hosts it (the language server today, the MCP server next),
so neither imports ``lsp``.
"""
