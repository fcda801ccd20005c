"""The sample's reader decodes Kafka's record batches itself: every codec, transaction,
header and null must come out as Kafka's own Java consumer sees it, and so must the
public path that reads kafka-python's own records where the private hooks are fenced
off (``MIGCHECK_KAFKA_HOOKS=off``, as outside the tested kafka-python series).

Records come from Kafka's Java producer (compression, transactions) and kcat
(headers); the expected records from the Java consumer (``Kafka.dump``) and
``kafka-console-consumer`` (timestamps), never from migcheck.
"""

from __future__ import annotations

import random

import pytest
from kafkatest import Dumped, Kafka, run

from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit, read_units
from migcheck.kafka.private_hooks import OFF_SWITCH

pytestmark = pytest.mark.kafka


def _read_both_ways(kafka: Kafka, units: list[WorkUnit], mp: pytest.MonkeyPatch) -> list[Dumped]:
    """The records read through the private hooks, once they are the same as through
    kafka-python's public path."""
    mp.setenv(OFF_SWITCH, "off")
    public = _read(kafka, units)
    mp.delenv(OFF_SWITCH)
    hooked = _read(kafka, units)
    assert hooked == public
    return hooked


def _read(kafka: Kafka, units: list[WorkUnit]) -> list[Dumped]:
    rows = []
    for batch in read_units(ClientConfig.load(kafka.bootstrap, None), units):
        for r in batch.to_pylist():
            size = -1 if r["value_size"] is None else r["value_size"]
            assert r["key_size"] == (None if r["key"] is None else len(r["key"]))
            rows.append(Dumped(r["partition"], r["offset"], r["key"], size))
    return rows


def _records(rng: random.Random, n: int) -> list[tuple[bytes | None, int | None, None]]:
    """Keys of 0 to 40 bytes, a few null; values of 0 to 300 bytes, a few tombstones."""
    out = []
    for i in range(n):
        key = None if i % 97 == 0 else rng.randbytes(rng.randrange(0, 41))
        value = None if i % 31 == 0 else rng.randrange(0, 301)
        out.append((key, value, None))
    return out


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_decodes_as_the_java_consumer_reads(
    kafka: Kafka, codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = kafka.create_topic(f"codec-{codec}", 2)
    rng = random.Random(codec)
    kafka.produce(topic, _records(rng, 3000), None, f"compression.type={codec}", "linger.ms=50")
    truth = kafka.dump(topic)
    end = {p: max(d.offset for d in truth if d.partition == p) + 1 for p in (0, 1)}
    # whole partitions, and windows that start and end inside compressed batches
    units = [
        WorkUnit(topic, 0, 0, end[0]),
        WorkUnit(topic, 1, 17, 700),
        WorkUnit(topic, 1, 901, 902),
    ]
    want = [
        d
        for u in units
        for d in truth
        if d.partition == u.partition and u.start <= d.offset < u.end
    ]
    assert len(want) > 1500
    assert _read_both_ways(kafka, units, monkeypatch) == want


def test_aborted_transactions_and_markers_never_appear(
    kafka: Kafka, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = kafka.create_topic("txn-decode", 1)
    rng = random.Random(5)
    first, aborted, last = _records(rng, 200), _records(rng, 150), _records(rng, 100)
    props = ("compression.type=lz4",)
    kafka.produce(topic, ["!begin", *first, "!commit"], kafka.unique("tx"), *props)
    kafka.produce(topic, ["!begin", *aborted, "!abort"], kafka.unique("tx"), *props)
    kafka.produce(topic, ["!begin", *last, "!commit"], kafka.unique("tx"), *props)
    truth = kafka.dump(topic)  # read_committed: the aborted ones are not there
    assert len(truth) == 300
    end = truth[-1].offset + 1
    assert end > 450  # the aborted records and the markers hold offsets too
    assert _read_both_ways(kafka, [WorkUnit(topic, 0, 0, end)], monkeypatch) == truth
    # a window that starts inside the aborted transaction
    inside = _read_both_ways(kafka, [WorkUnit(topic, 0, 250, end)], monkeypatch)
    assert inside == [d for d in truth if d.offset >= 250]


def test_headers_are_skipped_and_log_append_time_is_the_batchs(
    kafka: Kafka, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = kafka.create_topic("headers", 1, message_timestamp_type="LogAppendTime")
    lines = "".join(f"k{i}\t{'v' * (i % 50)}\n" for i in range(500))
    rc, _, err = run(
        ["kcat", "-P", "-b", kafka.bootstrap, "-t", topic, "-K", "\t", "-z", "snappy",
         "-H", "trace=abc", "-H", "empty=", "-H", "long=" + "h" * 300],
        stdin=lines,
    )  # fmt: skip
    assert rc == 0, err
    truth = kafka.dump(topic)
    assert _read_both_ways(kafka, [WorkUnit(topic, 0, 0, 500)], monkeypatch) == truth
    rc, out, err = kafka.tool(
        "kafka-console-consumer", "--bootstrap-server", kafka.bootstrap, "--topic", topic,
        "--from-beginning", "--max-messages", "500", "--formatter-property", "print.timestamp=true",
        "--formatter-property", "print.offset=true",
    )  # fmt: skip
    assert rc == 0, err
    stamps = {}
    for line in (ln for ln in out.splitlines() if ln.startswith("LogAppendTime:")):
        fields = dict(f.split(":", 1) for f in line.split("\t") if ":" in f)
        stamps[int(fields["Offset"])] = int(fields["LogAppendTime"])
    assert len(stamps) == 500
    for hooks in ("on", "off"):
        monkeypatch.setenv(OFF_SWITCH, hooks)
        got = {}
        client = ClientConfig.load(kafka.bootstrap, None)
        for batch in read_units(client, [WorkUnit(topic, 0, 0, 500)]):
            offsets = batch.column("offset").to_pylist()
            got.update(zip(offsets, batch.column("timestamp").to_pylist(), strict=True))
        assert got == stamps, hooks
