"""The copy's quick check: each side's records tallied per destination partition.

The exact check (:func:`migcheck.copy.verify.compared`) groups both topics' identities
(key, timestamp, digest of value and headers) and joins them: a shuffle of every record,
a third of a 5 M-record copy's time.  Most copies are right, so each read task first
sums its records per *bucket*, the destination partition a record belongs in: for the
source, the one its key's partitioner gives at the destination's count; for the
destination, the one it sits in; null keys (placed round-robin) in a bucket of their
own.  Per bucket it counts the records and adds up a 64-bit hash of each identity
(modulo 2**64).  Only a row per bucket and task reaches the driver.

Where every bucket's count and sum agree, the destination holds each source identity
exactly as often as the source, each in its key's partition: a missing, duplicated or
misplaced record changes its bucket's count, and records that would make up for one in
the count change its sum unless their hashes add up to the very same 64-bit value,
about as likely as two identities sharing the 64-bit digest the exact check relies on.
Anything else (and records producers wrote into the destination themselves) falls to
the exact check, which counts what differs.  Pure: numpy over a read batch's columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from migcheck.hashing.kernels import CRC32, MURMUR2, raw_hashes
from migcheck.hashing.partitioners import UNHASHED, arrow_buffers, partition_array

#: splitmix64's finalizer constants (Steele, Lea and Flood, 2014): every input bit moves
#: about half the output's.
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_NULL_KEY = np.uint64(0x9E3779B97F4A7C15)  # a null key hashes apart from an empty one


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def identity_hashes(keys: pa.Array, timestamps: pa.Array, digests: pa.Array) -> np.ndarray:
    """Each record's identity (key, timestamp, digest) as one 64-bit hash: the key's
    murmur2 and CRC-32 side by side, then the timestamp and the digest, each mixed in."""
    offsets, data = arrow_buffers(keys)
    halves = []
    for hash_id in (MURMUR2, CRC32):
        out = np.empty(len(keys), np.int64)  # the kernels' type: compiled once per host
        raw_hashes(hash_id, offsets, data, out)
        halves.append(out.view(np.uint64) & np.uint64(0xFFFFFFFF))
    key = (halves[0] << np.uint64(32)) | halves[1]
    null = np.asarray(keys.is_null(), dtype=bool)
    key = np.where(null, key ^ _NULL_KEY, key)
    stamp = timestamps.to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
    digest = digests.to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
    return _mix(_mix(_mix(key) ^ stamp) ^ digest)


def buckets(
    keys: pa.Array, partitions: int, partitioner: str, sits: np.ndarray | None = None
) -> np.ndarray:
    """Each record's bucket index: 0 for a key the partitioner does not hash, else 1 + the
    destination partition it belongs in (the source: ``sits`` None) or sits in (the
    destination: ``sits``, its partitions)."""
    placed = partition_array(keys, partitions, partitioner)
    where = placed if sits is None else sits.astype(np.int32)
    return np.where(placed == UNHASHED, 0, where + 1).astype(np.int64)


@dataclass(frozen=True)
class Tally:
    """Per bucket (index 0: keys not hashed; ``1 + q``: destination partition ``q``):
    records, and their identities' hashes summed modulo 2**64."""

    counts: tuple[int, ...]
    sums: tuple[int, ...]

    @property
    def records(self) -> int:
        return sum(self.counts)


def tally_of(rows: list[tuple[int, int, int, int]], side: int, partitions: int) -> Tally:
    """One side's tally from the tasks' rows (side, bucket, records, hash sum as a signed
    64-bit integer), added up."""
    counts, sums = [0] * (partitions + 1), [0] * (partitions + 1)
    for s, bucket, n, h in rows:
        if s == side:
            counts[bucket] += n
            sums[bucket] = (sums[bucket] + h) % 2**64
    return Tally(tuple(counts), tuple(sums))


def tallied(idx: np.ndarray, hashes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Records and hash sums (uint64, wrapping) per bucket index below ``size``."""
    counts = np.bincount(idx, minlength=size).astype(np.int64)
    sums = np.zeros(size, np.uint64)
    np.add.at(sums, idx, hashes)
    return counts, sums
