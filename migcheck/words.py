"""Words for counts, shared by every text migcheck writes (reports, advice, runbooks)."""

from __future__ import annotations

from collections.abc import Sequence


def plural(n: int, word: str) -> str:
    """``1 thread``, ``2 threads``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def listing(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]
