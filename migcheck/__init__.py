"""migcheck: predict what a Kafka partition-count change does to keyed data and state.

The stable public API:

- :func:`murmur2` -- Kafka's ``Utils.murmur2``, the signed 32-bit value Java returns.
- :func:`partition` -- one key's partition under a client's partitioner.
- :func:`partition_array` -- the same, vectorized over an Arrow array of keys.
- :func:`placement_array` -- the hash value each partition is taken modulo of.
- :data:`PARTITIONERS` -- the supported partitioners by name.

The Spark column functions live in :mod:`migcheck.analysis.spark` (imported
lazily, because importing PySpark is slow and not every caller needs it).
"""

from migcheck.errors import MigcheckError, UnhashedKeyError
from migcheck.hashing.partitioners import (
    PARTITIONERS,
    UNHASHED,
    Partitioner,
    murmur2,
    partition,
    partition_array,
    placement_array,
)
from migcheck.version import __version__

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
