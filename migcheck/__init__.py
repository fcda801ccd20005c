"""migcheck: predict what a Kafka partition-count change does to keyed data and state.

The stable public API:

- :func:`murmur2` -- Kafka's ``Utils.murmur2``, the signed 32-bit value Java returns.
- :func:`partition` -- one key's partition under a client's partitioner.
- :func:`partition_array` -- the same, vectorized over an Arrow array of keys.
- :func:`placement_array` -- the hash value each partition is taken modulo of.
- :data:`PARTITIONERS` -- the supported partitioners by name.

The Spark column functions live in :mod:`migcheck.spark` (imported lazily,
because importing PySpark is slow and not every caller needs it).
"""

from migcheck.partitioning import (
    PARTITIONERS,
    UNHASHED,
    Partitioner,
    UnhashedKeyError,
    murmur2,
    partition,
    partition_array,
    placement_array,
)

__version__ = "0.1.0"

__all__ = [
    "PARTITIONERS",
    "UNHASHED",
    "Partitioner",
    "UnhashedKeyError",
    "__version__",
    "murmur2",
    "partition",
    "partition_array",
    "placement_array",
]
