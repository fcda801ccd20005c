"""Fetched bytes to columns (migcheck.kafka.recordbatch), and hook 4 of
migcheck.kafka.private_hooks that feeds it, against kafka-python's own fetcher.

The oracle is kafka-python's ``Fetcher.PartitionRecords`` (``read_committed``, its CRC
checks on) reading the same fetched bytes: the records it returns, where its next fetch
starts and the leader epoch it saw.  The batches come from kafka-python's own builder
(``batches``), in every codec, with transactions committed and aborted by their markers,
compaction gaps, LogAppendTime and a last batch cut short by the fetch size.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pyarrow as pa
import pytest
from batches import CODECS, Record, batch, offsets, random_log
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import TopicPartition
from kafka.consumer.fetcher import ConsumerRecord, Fetcher
from kafka.errors import CorruptRecordError
from kafka.protocol.consumer import FetchResponse, IsolationLevel
from kafka.record.memory_records import MemoryRecords

from migcheck.errors import ReadError
from migcheck.kafka import recordbatch
from migcheck.kafka.fetch import WorkUnit, columns_batch
from migcheck.kafka.private_hooks import chunk_records
from migcheck.kafka.recordbatch import Columns, columns_of_records, decode, whole_records

TP = TopicPartition("t", 0)
Aborted = FetchResponse.FetchableTopicResponse.PartitionData.AbortedTransaction
Row = tuple[int, bytes | None, int, int]  # offset, key, value size (-1: null), timestamp


class Fetched:
    """One fetch of a random partition: its bytes from the batch that holds ``first``
    (the last batch maybe cut short), the aborted transactions, and a window
    ``[first, end)``."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        start = rng.randrange(0, 10_000)
        batches, self.aborted = random_log(rng, start)
        log_end = offsets(batches[-1])[1] + 1
        self.first = rng.randrange(start, log_end)
        self.end = rng.choice([log_end, 2**62, rng.randrange(self.first, log_end + 1)])
        held = [b for b in batches if offsets(b)[1] >= self.first]
        data = b"".join(held)
        if rng.random() < 0.3:  # the fetch size ended inside the last batch
            data = data[: len(data) - rng.randrange(1, len(held[-1]))]
        self.data = data

    def partition_records(self, cls: type[Fetcher.PartitionRecords]) -> Fetcher.PartitionRecords:
        """``cls`` (kafka-python's, or hook 4's subclass) over these bytes, as the fetcher
        builds it for a ``read_committed`` consumer."""
        return cls(
            self.first,
            TP,
            MemoryRecords(self.data),
            check_crcs=True,
            isolation_level=IsolationLevel.READ_COMMITTED,
            aborted_transactions=[Aborted(producer_id=p, first_offset=o) for p, o in self.aborted],
        )

    def kafka_pythons(self) -> tuple[list[ConsumerRecord], Fetcher.PartitionRecords]:
        """kafka-python's records of the window, and its drained ``PartitionRecords``."""
        theirs = self.partition_records(Fetcher.PartitionRecords)
        records = theirs.take()
        return [r for r in records if r.offset < self.end], theirs


def rows_of_records(records: list[ConsumerRecord]) -> list[Row]:
    return [(r.offset, r.key, r.serialized_value_size, r.timestamp) for r in records]


def rows_of_columns(c: Columns) -> list[Row]:
    spans = itertools.pairwise([0, *c.key_ends.tolist()])
    keys = [
        None if null else bytes(c.key_data[start:end])
        for (start, end), null in zip(spans, c.key_null.tolist(), strict=True)
    ]
    columns = (c.offsets.tolist(), keys, c.value_sizes.tolist(), c.timestamps.tolist())
    return list(zip(*columns, strict=True))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_decode_reads_what_kafka_pythons_fetcher_returns(seed: int) -> None:
    fetched = Fetched(seed)
    records, theirs = fetched.kafka_pythons()
    got = decode(fetched.data, fetched.first, fetched.end, fetched.aborted, "t-0")
    assert rows_of_columns(got.columns) == rows_of_records(records)
    _moved_on_as_kafka_python(fetched, theirs, got.next_offset, got.leader_epoch)


def _moved_on_as_kafka_python(
    fetched: Fetched, theirs: Fetcher.PartitionRecords, next_offset: int, leader_epoch: int
) -> None:
    """Where the next fetch starts, and the leader epoch seen: kafka-python's where the
    window holds every fetched batch; otherwise the window's end (past it where a skipped
    batch, a marker or an aborted one, straddles it)."""
    if fetched.end >= theirs.next_fetch_offset:
        assert (next_offset, leader_epoch) == (theirs.next_fetch_offset, theirs.leader_epoch)
    else:
        assert fetched.end <= next_offset <= theirs.next_fetch_offset


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_fetcher_hook_yields_kafka_pythons_records_as_columns(seed: int) -> None:
    """Hook 4's ``PartitionRecords``: one chunk of the records kafka-python's own returns,
    its next fetch offset, records read and leader epoch as kafka-python's own keeps them."""
    fetched = Fetched(seed)
    records, theirs = fetched.kafka_pythons()
    ours = fetched.partition_records(chunk_records(Fetcher.PartitionRecords, {TP: fetched.end}))
    chunks = ours.take()
    assert len(chunks) == (1 if records else 0)
    assert [row for c in chunks for row in rows_of_columns(c)] == rows_of_records(records)
    assert not ours  # drained: the fetcher moves on to the next partition
    assert ours.records_read == len(records)
    _moved_on_as_kafka_python(fetched, theirs, ours.next_fetch_offset, ours.leader_epoch)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_kafka_pythons_records_make_the_arrow_batch_the_hook_makes(seed: int) -> None:
    """The public path (kafka-python's records gathered by ``columns_of_records``) and the
    fast one (hook 4) give the reader the same Arrow batch."""
    fetched = Fetched(seed)
    records, _ = fetched.kafka_pythons()
    ours = fetched.partition_records(chunk_records(Fetcher.PartitionRecords, {TP: fetched.end}))
    unit = WorkUnit(TP.topic, TP.partition, fetched.first, fetched.end)
    fast = pa.Table.from_batches(
        [columns_batch(unit, c) for c in ours.take()] or [columns_batch(unit, _none())]
    )
    public = columns_batch(unit, columns_of_records(records))
    assert pa.Table.from_batches([public]).equals(fast.combine_chunks())


def test_the_digest_is_fnv1a_64_as_published() -> None:
    """Fowler, Noll and Vo's own test vectors for FNV-1a, 64 bits (isthe.com/chongo/tech/
    comp/fnv): the empty string, "a" and "foobar"."""
    vectors = [(b"", 0xCBF29CE484222325), (b"a", 0xAF63DC4C8601EC8C),
               (b"foobar", 0x85944171F73967E8)]  # fmt: skip
    for data, want in vectors:
        assert int(recordbatch._fnv1a_64(np.frombuffer(data, np.uint8), 0, len(data))) == want


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_digest_is_of_the_value_and_headers_kafka_python_reads(seed: int) -> None:
    """Decoded from the fetched bytes, or from kafka-python's records (their value and
    headers encoded again): the same digest; records of equal value and headers share
    one, and no two others do here."""
    fetched = Fetched(seed)
    records, _ = fetched.kafka_pythons()
    got = decode(fetched.data, fetched.first, fetched.end, fetched.aborted, "t-0", digest=True)
    public = columns_of_records(records, digest=True)
    assert got.columns.digests is not None and public.digests is not None
    assert got.columns.digests.tolist() == public.digests.tolist()
    digests = public.digests.tolist()
    by_content = {(r.value, tuple(r.headers)): d for r, d in zip(records, digests, strict=True)}
    assert len(set(by_content.values())) == len(by_content)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_whole_records_are_the_records_kafka_python_reads(seed: int) -> None:
    """Decoded with bodies (a copy's read), each record is kafka-python's: its offset,
    timestamp, key, value (null or empty alike) and headers (null values included)."""
    fetched = Fetched(seed)
    records, _ = fetched.kafka_pythons()
    got = decode(fetched.data, fetched.first, fetched.end, fetched.aborted, "t-0", bodies=True)
    theirs = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in records]
    assert [tuple(w) for w in whole_records(got.columns)] == theirs


def _none() -> Columns:
    return columns_of_records([])


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_compresses_here_and_decodes_as_kafka_python_reads(codec: str) -> None:
    """Each codec for sure (the random logs draw them by chance): values that compress."""
    records = [Record(1000 + i, b"k%d" % i, b"x" * (i * 7), gap=i % 3) for i in range(200)]
    data = batch(40, records, codec)
    assert MemoryRecords(data).next_batch().compression_type == CODECS[codec]
    want = rows_of_records(Fetcher.PartitionRecords(45, TP, MemoryRecords(data)).take())
    assert rows_of_columns(decode(data, 45, 2**62, [], "t-0").columns) == want


def test_a_corrupt_batch_fails_here_as_in_kafka_python() -> None:
    data = bytearray(batch(0, [Record(1, b"key", b"value")]))
    data[-3] ^= 0xFF  # inside the value: only the CRC can tell
    with pytest.raises(CorruptRecordError):
        Fetcher.PartitionRecords(0, TP, MemoryRecords(bytes(data))).take()
    with pytest.raises(ReadError, match="fails its CRC check"):
        decode(bytes(data), 0, 10, [], "t-0")


@settings(max_examples=40, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=40)),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.integers(0, 2**40),
        ),
        min_size=1,
        max_size=50,
    ),
    window=st.tuples(st.integers(0, 60), st.integers(0, 60)),
)
def test_the_record_loop_interpreted_equals_it_compiled(
    records: list[tuple[bytes | None, bytes | None, int]], window: tuple[int, int]
) -> None:
    """A small read decodes with the loop interpreted (no numba to import), a large one
    compiled: the same source, and the same columns, row counts and status either way."""
    import numpy as np
    from kafka.record.memory_records import MemoryRecordsBuilder

    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 22)
    for key, value, ts in records:
        builder.append(timestamp=ts, key=key, value=value, headers=[])
    builder.close()
    raw = bytes(builder.buffer())
    src = np.frombuffer(raw[recordbatch._HEADER.size :], np.uint8)
    base_ts = records[0][2]
    first, end = 100 + min(window), 100 + max(window)
    results = []
    for loop in (recordbatch._records, recordbatch._compiled()):
        out = recordbatch._Builder(len(records), len(raw), digest=True, bodies=True)
        i, d, b, status = loop(src, len(records), 100, base_ts, -1, first, end, out.cols, 0, 0,
                               0, True, True)  # fmt: skip
        out.i, out.d, out.b = i, d, b
        c = out.columns()
        assert c.digests is not None
        results.append((i, d, b, status, rows_of_columns(c), c.digests.tolist(),
                        whole_records(c)))  # fmt: skip
    assert results[0] == results[1]
