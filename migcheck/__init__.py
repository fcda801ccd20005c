"""migcheck: predict what a Kafka partition-count change does to keyed data and state.

The stable public API:

- :func:`murmur2` -- Kafka's ``Utils.murmur2``, the signed 32-bit value Java returns.
- :func:`partition` -- one key's partition under a client's partitioner.
- :func:`partition_array` -- the same, vectorized over an Arrow array of keys.
- :func:`placement_array` -- the hash value each partition is taken modulo of.
- :data:`PARTITIONERS` -- the supported partitioners by name.

The hashing names are loaded on first use (PEP 562): they bring NumPy, and every
``migcheck`` command imports this package first, most of them (a refusal, ``--help``,
``plan``) without hashing a key.  The Spark column functions live in
:mod:`migcheck.analysis.spark` (imported lazily too: importing PySpark is slow).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from migcheck.errors import MigcheckError, UnhashedKeyError
from migcheck.version import __version__

if TYPE_CHECKING:
    from migcheck.hashing.partitioners import (
        PARTITIONERS,
        UNHASHED,
        Partitioner,
        murmur2,
        partition,
        partition_array,
        placement_array,
    )

#: The public names :mod:`migcheck.hashing.partitioners` holds.
_HASHING = frozenset(
    {"PARTITIONERS", "UNHASHED", "Partitioner", "murmur2", "partition", "partition_array",
     "placement_array"}
)  # fmt: skip

__all__ = [
    "PARTITIONERS",
    "UNHASHED",
    "MigcheckError",
    "Partitioner",
    "UnhashedKeyError",
    "__version__",
    "murmur2",
    "partition",
    "partition_array",
    "placement_array",
]


def __getattr__(name: str) -> Any:
    if name in _HASHING:
        return getattr(importlib.import_module("migcheck.hashing.partitioners"), name)
    raise AttributeError(f"module 'migcheck' has no attribute {name!r}")
