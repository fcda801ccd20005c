"""The stable sampling rank of a key: MurmurHash3, independent of every partitioner.

A report names a few moved keys per candidate: the ones of lowest rank.  The rank
is mmh3 (the library, never a second implementation) of the whole key with a fixed
seed, so the same keys are named in every run and on every machine, and, since
mmh3 is unrelated to the partitioners' hashes, the named keys are spread over the
partitions rather than picked by where they land.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

#: The rank's seed ("mig"): part of what makes the sample the same in every run.
SAMPLE_SEED = 0x6D6967


def sample_ranks(keys: pa.Array) -> pa.Array:
    """Each key's rank (unsigned 32-bit mmh3, as int64), null for the null key.

    Shared by Spark's UDF (a full scan's histories) and a sample's read tasks.
    """
    import mmh3
    import pyarrow as pa

    def rank(key: bytes | None) -> int | None:
        return None if key is None else mmh3.hash(key, SAMPLE_SEED, signed=False)

    return pa.array([rank(k) for k in keys.to_pylist()], type=pa.int64())
