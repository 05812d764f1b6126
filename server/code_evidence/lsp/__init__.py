"""The language server: the engine behind LSP, for editors (``code-evidence serve``).

``protocol`` holds every custom method, parameter and field (README.md documents them and a
test keeps the two in step); ``server`` wires handlers; ``session`` owns one workspace folder's
engine, watcher and indexing thread.
"""
