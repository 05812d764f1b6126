"""The language server: the engine behind LSP, for editors (``code-evidence serve``).

``server`` is the plumbing (the pygls server, its threads, how other threads reach the client);
``features/`` holds what it answers, one LSP feature a module; ``folders`` maps each request to
its workspace folder; ``session`` is one folder's engine, read thread and index passes (the
passes themselves are ``live/passes.py``, which knows nothing of LSP); ``protocol`` holds every
custom method, parameter and field (README.md documents them and a test keeps the two in step);
``uris`` converts between LSP's URIs and ranges and the engine's paths and lines.

Nothing outside this package imports it, except the CLI's ``serve``, lazily.
"""
