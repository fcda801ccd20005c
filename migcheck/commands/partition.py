"""``migcheck partition``: each key's partition today and under a proposed count.

No Kafka, no Spark: the keys are given, encoded as the producers' serializers
write them, and hashed by the same kernels as every other path.
"""

from __future__ import annotations

from collections.abc import Sequence

from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_OK
from migcheck.hashing.keys import encode_key
from migcheck.hashing.partitioners import UNHASHED, partition_array
from migcheck.model.partition import KeyRow, Placements
from migcheck.model.partitioner import PartitionerChoice


def run_partition(
    texts: Sequence[str],
    partitions: int,
    to: int | None,
    partitioner: PartitionerChoice,
    key_type: str,
    key_encoding: str,
) -> Outcome[Placements]:
    """One row per key: its text and hex, its partition (None when not hashed) and, with
    ``to``, its new partition and whether it moves."""
    raw = [encode_key(t, key_type, key_encoding) for t in texts]
    now = partition_array(raw, partitions, partitioner)
    new = partition_array(raw, to, partitioner) if to is not None else None
    rows: list[KeyRow] = []
    for i, (text, key) in enumerate(zip(texts, raw, strict=True)):
        p = int(now[i])
        row: KeyRow = {"key": text, "key_hex": key.hex(), "partition": None if p == UNHASHED else p}
        if new is not None:
            q = int(new[i])
            row["new_partition"] = None if q == UNHASHED else q
            row["moved"] = None if p == UNHASHED else p != q
        rows.append(row)
    return Outcome(Placements(partitions, to, rows), EXIT_OK)
