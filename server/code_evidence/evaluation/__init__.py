"""Measuring and fitting the ranking offline, on questions mined from a repository's own git
history (``code-evidence eval`` and ``tune``) and on the shared dev set (``bench/quality.py``)."""
