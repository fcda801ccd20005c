"""The copy's quick check (migcheck.copy.tally): two sides agree exactly when they hold the
same identities in the same destination partitions, whatever their order or batches."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
from kafka.partitioner.default import murmur2 as java_murmur2

from migcheck.copy.tally import Tally, buckets, identity_hashes, tallied, tally_of

PARTITIONS = 8
Rec = tuple[bytes | None, int, int]  # key, timestamp, digest


def _java_partition(key: bytes) -> int:
    """The Java client's partition (kafka-python's port of its murmur2)."""
    return (java_murmur2(key) & 0x7FFFFFFF) % PARTITIONS


def _side(batches: list[list[Rec]], sits: list[list[int]] | None = None) -> Tally:
    """A side tallied batch by batch, as a read task does: the source when ``sits`` is
    None, else the destination, its records sitting in ``sits``."""
    rows = []
    for i, records in enumerate(batches):
        keys = pa.array([k for k, _, _ in records], pa.binary())
        stamps = pa.array([t for _, t, _ in records], pa.int64())
        digests = pa.array([d for _, _, d in records], pa.int64())
        where = None if sits is None else np.array(sits[i], np.int32)
        idx = buckets(keys, PARTITIONS, "murmur2", where)
        n, h = tallied(idx, identity_hashes(keys, stamps, digests), PARTITIONS + 1)
        rows += [(0, b, int(n[b]), int(h.view(np.int64)[b])) for b in range(PARTITIONS + 1)]
    return tally_of(rows, 0, PARTITIONS)


def _records(n: int, seed: int = 7) -> list[Rec]:
    rng = random.Random(seed)
    keys = [None, b"", *(b"k%d" % i for i in range(40))]
    return [
        (rng.choice(keys), rng.randrange(2**41), rng.randrange(-(2**63), 2**63)) for _ in range(n)
    ]


def _copied(records: list[Rec]) -> tuple[list[Rec], list[int]]:
    """The records as a right copy holds them: keyed ones on the Java client's partition,
    null keys anywhere; shuffled."""
    rng = random.Random(1)
    placed = [
        (r, rng.randrange(PARTITIONS) if r[0] is None else _java_partition(r[0])) for r in records
    ]
    rng.shuffle(placed)
    return [r for r, _ in placed], [q for _, q in placed]


def test_a_right_copy_agrees_in_any_order_and_batches() -> None:
    records = _records(500)
    copy, sits = _copied(records)
    source = _side([records[:123], records[123:]])
    dest = _side([copy[:300], copy[300:]], [sits[:300], sits[300:]])
    assert source == dest and source.records == 500
    # the null key is bucket 0 (round-robin); "" is hashed by murmur2 like any key
    assert source.counts[0] == sum(1 for k, _, _ in records if k is None)


def test_the_source_is_bucketed_by_the_java_clients_partition() -> None:
    records = [(b"k%d" % i, 0, 0) for i in range(64)]
    tally = _side([records])
    want = [0] * (PARTITIONS + 1)
    for k, _, _ in records:
        want[1 + _java_partition(k)] += 1
    assert list(tally.counts) == want


def test_a_duplicate_a_loss_or_a_misplaced_record_disagrees() -> None:
    records = _records(300)
    copy, sits = _copied(records)
    source = _side([records])
    keyed = next(i for i, r in enumerate(copy) if r[0])
    assert _side([[*copy, copy[keyed]]], [[*sits, sits[keyed]]]) != source  # duplicated
    assert _side([copy[1:]], [sits[1:]]) != source  # missing
    moved = list(sits)
    moved[keyed] = (moved[keyed] + 1) % PARTITIONS
    assert _side([copy], [moved]) != source  # misplaced


def test_records_that_make_up_the_count_still_disagree() -> None:
    """One record lost and another of its bucket copied twice: the counts agree, the
    sums do not; a changed timestamp or digest is another identity."""
    base = [(b"a", 1, 10), (b"a", 2, 20)]
    source = _side([base])
    q = _java_partition(b"a")
    assert _side([[(b"a", 1, 10), (b"a", 1, 10)]], [[q, q]]) != source
    assert _side([[(b"a", 1, 10), (b"a", 2, 21)]], [[q, q]]) != source
    assert _side([[(b"a", 1, 10), (b"a", 3, 20)]], [[q, q]]) != source
    assert _side([[(b"a", 2, 20), (b"a", 1, 10)]], [[q, q]]) == source


def test_a_null_key_and_an_empty_one_are_other_identities() -> None:
    keys = pa.array([None, b""], pa.binary())
    zeros = pa.array([0, 0], pa.int64())
    hashes = identity_hashes(keys, zeros, zeros)
    assert hashes[0] != hashes[1]
