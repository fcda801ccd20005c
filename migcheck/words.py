"""Words for counts, shared by every text migcheck writes (reports, advice, runbooks)."""

from __future__ import annotations


def plural(n: int, word: str) -> str:
    """``1 thread``, ``2 threads``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
