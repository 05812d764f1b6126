"""Code Evidence: find the evidence for a code question, cited and under a token budget."""

__version__ = "0.1.0"
