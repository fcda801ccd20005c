"""``migcheck analyze`` against the real broker, on data Kafka's own clients placed.

Expected values come from the records as Kafka's Java consumer reads them back
(``kafka.dump``), from kafka-python's murmur2, zlib's CRC-32, the mmh3 library and
the records the test itself produced; never from migcheck.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import mmh3
import pytest
from kafkatest import Kafka, run
from oracles import crc_partition, java_partition
from oracles import run_cli as cli

from migcheck.cli import main

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def analyze(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the real CLI in this process (sharing the test Spark session)."""
    with pytest.raises(SystemExit) as exit_:
        main(["analyze", *args])
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


def analyze_json(capsys: pytest.CaptureFixture[str], kafka: Kafka, *args: str) -> dict:
    rc, out, err = analyze(capsys, "--bootstrap-server", kafka.bootstrap, "--format", "json", *args)
    assert rc in (0, 1), err
    return json.loads(out)


def moved_keys_csv(path: Path) -> dict[int, set[tuple[bytes, int, int]]]:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    by_candidate: dict[int, set[tuple[bytes, int, int]]] = {}
    for r in rows:
        by_candidate.setdefault(int(r["candidate_partitions"]), set()).add(
            (bytes.fromhex(r["key_hex"]), int(r["partition"]), int(r["new_partition"]))
        )
    return by_candidate


def test_full_scan_matches_an_independent_oracle(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    topic = kafka.create_topic("orders", 6)
    rng = random.Random(5)
    keys = [f"customer-{i}".encode() for i in range(1500)] + [b"\xff\x00\xfe", b""]
    records = [(rng.choice(keys), rng.randrange(1, 200), None) for _ in range(6000)]
    kafka.produce(topic, records)
    dumped = kafka.dump(topic)
    moved_csv = tmp_path / "moved.csv"

    report = analyze_json(
        capsys,
        kafka,
        "--topic",
        topic,
        "--to",
        "8,12",
        "--full",
        "--moved-keys-out",
        str(moved_csv),
    )
    (t,) = report["topics"]
    assert t["partitioner"] == "murmur2" and t["conformance"] == 1.0
    assert t["records_scanned"] == len(dumped) == 6000
    assert t["distinct_keys"] == len({d.key for d in dumped})
    csv_moved = moved_keys_csv(moved_csv)
    observed = {(d.key, d.partition) for d in dumped}
    for cand, m in zip(t["candidates"], (8, 12), strict=True):
        expected = {(k, p, java_partition(k, m)) for k, p in observed if java_partition(k, m) != p}
        assert csv_moved[m] == expected
        assert cand["moved_keys"] == len(expected)
        moved_keys = {k for k, _, _ in expected}
        moved_records = [d for d in dumped if d.key in moved_keys]
        assert cand["moved_records"] == len(moved_records)
        assert cand["moved_bytes"] == sum(len(d.key) + d.value_size for d in moved_records)
        assert sum(map(sum, cand["matrix"])) == len(observed)
        assert cand["expected_moved_fraction"] == pytest.approx({8: 0.75, 12: 0.5}[m])
        for s in cand["moved_key_sample"]:
            key = bytes.fromhex(s["key_hex"])
            assert (key, s["partition"], s["new_partition"]) in expected
        # the stable sample: the 10 moved keys of lowest mmh3 (seed "mig"), lowest first
        ranked = sorted(moved_keys, key=lambda k: (mmh3.hash(k, 0x6D6967, signed=False), k))
        assert [bytes.fromhex(s["key_hex"]) for s in cand["moved_key_sample"]] == ranked[:10]


def test_compacted_topic_counts_live_state(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("store-changelog", 4, cleanup_policy="compact")
    rng = random.Random(9)
    latest: dict[bytes, int | None] = {}
    records = []
    for i in range(3000):
        key = f"k{rng.randrange(400)}".encode()
        value = None if i % 13 == 0 else rng.randrange(1, 300)
        records.append((key, value, None))
        latest[key] = value
    kafka.produce(topic, records)

    report = analyze_json(capsys, kafka, "--topic", topic, "--to", "6", "--full")
    (t,) = report["topics"]
    live = {k: v for k, v in latest.items() if v is not None}
    assert t["cleanup_policy"] == "compact" and t["state"] == "live"
    assert t["distinct_keys"] == len(latest)
    assert t["state_records"] == len(live)
    assert t["state_bytes"] == sum(len(k) + v for k, v in live.items())
    moved_live = {k for k in live if java_partition(k, 6) != java_partition(k, 4)}
    (cand,) = t["candidates"]
    assert cand["moved_keys"] == len(moved_live)
    assert cand["moved_bytes"] == sum(len(k) + live[k] for k in moved_live)


def test_aborted_transactions_are_not_counted(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("txn", 3)
    committed = [(f"ok-{i}".encode(), 10, None) for i in range(50)]
    aborted = [(f"aborted-{i}".encode(), 10, None) for i in range(30)]
    kafka.produce(
        topic, ["!begin", *committed, "!commit", "!begin", *aborted, "!abort"], kafka.unique("tx")
    )
    report = analyze_json(capsys, kafka, "--topic", topic, "--to", "4", "--full")
    (t,) = report["topics"]
    assert t["records_scanned"] == 50
    assert t["distinct_keys"] == 50
    assert t["records_total"] > 50  # offsets include the aborted records and markers


def test_sample_estimates_cover_the_full_scan_truth(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("big", 4)
    rng = random.Random(17)
    kafka.produce(
        topic,
        [
            (f"user-{rng.randrange(20_000)}".encode(), rng.randrange(10, 100), None)
            for _ in range(40_000)
        ],
    )
    full = analyze_json(capsys, kafka, "--topic", topic, "--to", "6", "--full")
    sample = analyze_json(
        capsys, kafka, "--topic", topic, "--to", "6", "--sample-per-partition", "2500"
    )
    (tf,), (ts,) = full["topics"], sample["topics"]
    assert ts["sampled"] is True and ts["records_scanned"] < tf["records_scanned"]
    (cf,), (cs,) = tf["candidates"], ts["candidates"]
    for name in ("moved_fraction", "moved_records", "moved_bytes", "moved_keys"):
        lo, hi = cs[f"{name}_interval"]
        assert lo <= cf[name] <= hi, (name, cf[name], lo, hi)
        b_lo, b_hi = cs[f"{name}_bounds"]  # certain: whatever the unread records hold
        assert b_lo <= cf[name] and (b_hi is None or cf[name] <= b_hi), (name, b_lo, b_hi)
    lo, hi = ts["distinct_keys_interval"]
    assert lo <= tf["distinct_keys"] <= hi
    assert ts["sample_assumption"]["holds"] is True  # keys drawn alike at every offset
    b_lo, b_hi = ts["distinct_keys_bounds"]
    assert b_lo <= lo and hi <= b_hi and hi - lo < (b_hi - b_lo) / 10


def test_null_keys_empty_partitions_deleted_records_big_and_binary_keys(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    topic = kafka.create_topic("edge", 12)
    big_key = bytes(random.Random(1).getrandbits(8) for _ in range(1024 * 1024))
    binary = [b"\x80\x81", b"\xc3\x28", b"\x00" * 5]
    kafka.produce(
        topic,
        [(None, 5, None)] * 7
        + [(big_key, 3, None)]
        + [(k, 1, None) for k in binary] * 2
        + [(b"lead", 1, None)] * 5,
    )
    dumped = kafka.dump(topic)
    lead_partition = next(d.partition for d in dumped if d.key == b"lead")
    spec = tmp_path / "delete.json"
    spec.write_text(
        json.dumps(
            {
                "partitions": [{"topic": topic, "partition": lead_partition, "offset": 3}],
                "version": 1,
            }
        )
    )
    rc, out, err = kafka.tool(
        "kafka-delete-records",
        "--bootstrap-server",
        kafka.bootstrap,
        "--offset-json-file",
        str(spec),
    )
    assert rc == 0, out + err
    remaining = [d for d in dumped if not (d.partition == lead_partition and d.offset < 3)]

    report = analyze_json(capsys, kafka, "--topic", topic, "--to", "16", "--full")
    (t,) = report["topics"]
    assert t["null_key_records"] == sum(1 for d in remaining if d.key is None)
    assert t["records_scanned"] == len(remaining)
    parts = {p["partition"]: p for p in t["partitions"]}
    assert parts[lead_partition]["log_start_offset"] == 3
    assert sum(1 for p in parts.values() if p["records_scanned"] == 0) >= 12 - 5
    (cand,) = t["candidates"]
    keyed = {(d.key, d.partition) for d in remaining if d.key is not None}
    expected = {k for k, p in keyed if java_partition(k, 16) != p}
    assert cand["moved_keys"] == len(expected)
    assert t["distinct_keys"] == len(keyed)


def test_auto_identifies_librdkafka_default_partitioner(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("kcat", 5)
    keys = [f"device-{i}" for i in range(300)]
    lines = "".join(f"{k}:v{i}\n" for i, k in enumerate(keys))
    rc, _, err = run(["kcat", "-P", "-b", kafka.bootstrap, "-t", topic, "-K", ":"], stdin=lines)
    assert rc == 0, err
    report = analyze_json(capsys, kafka, "--topic", topic, "--to", "7", "--full")
    (t,) = report["topics"]
    assert t["partitioner"] == "consistent_random" and t["conformance"] == 1.0
    assert t["conformance_by_partitioner"]["murmur2"] < 0.5
    (cand,) = t["candidates"]
    crc_moved = [k for k in keys if crc_partition(k.encode(), 7) != crc_partition(k.encode(), 5)]
    assert cand["moved_keys"] == len(crc_moved)


def test_explicit_partitions_refuse_prediction_unless_forced(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("custom", 4)
    kafka.produce(topic, [(f"k{i}".encode(), 5, i % 4) for i in range(200)])  # round-robin
    rc, out, _ = analyze(
        capsys,
        "--bootstrap-server",
        kafka.bootstrap,
        "--topic",
        topic,
        "--to",
        "8",
        "--full",
        "--format",
        "json",
    )
    assert rc == 3  # cannot predict, apart from bad input
    (t,) = json.loads(out)["topics"]
    assert t["predictable"] is False and t["partitioner"] is None and t["candidates"] == []
    assert t["verdict"]["level"] == "unpredictable"

    forced = analyze_json(
        capsys, kafka, "--topic", topic, "--to", "8", "--full", "--partitioner", "murmur2"
    )
    (t,) = forced["topics"]
    non_conforming = sum(1 for i in range(200) if java_partition(f"k{i}".encode(), 4) != i % 4)
    assert t["non_conforming_keys"] == non_conforming
    assert t["conformance"] == pytest.approx(1 - non_conforming / 200)


def test_a_key_on_two_partitions_counts_once(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ten keys also written to a partition their hash does not name (a producer with a
    custom partitioner, say): no partitioner places every key, so migcheck counts the
    distinct keys rather than its histories, and each of the ten counts once."""
    topic = kafka.create_topic("twice", 4)
    keys = [f"user-{i}".encode() for i in range(100)]
    kafka.produce(topic, [(k, 8, None) for k in keys])  # Java's default partitioner
    strays = [(k, 8, (java_partition(k, 4) + 1) % 4) for k in keys[:10]]
    kafka.produce(topic, strays)
    forced = analyze_json(
        capsys, kafka, "--topic", topic, "--to", "8", "--full", "--partitioner", "murmur2"
    )
    (t,) = forced["topics"]
    assert t["records_scanned"] == 110
    assert t["distinct_keys"] == len(set(keys)) == 100
    assert t["non_conforming_keys"] == len(strays)
    rc, out, _ = analyze(  # auto, a sample (which reads a small topic whole)
        capsys, "--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to", "8",
        "--format", "json",
    )  # fmt: skip
    assert rc == 3  # no partitioner placed every key: no prediction
    (t,) = json.loads(out)["topics"]
    assert t["distinct_keys"] == 100


def test_gate_exit_codes(spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]) -> None:
    topic = kafka.create_topic("gate", 3)
    kafka.produce(topic, [(f"g{i}".encode(), 5, None) for i in range(300)])
    base = ["--bootstrap-server", kafka.bootstrap, "--topic", topic, "--to", "6", "--full"]
    rc, out, _ = analyze(capsys, *base, "--fail-if-moved")
    assert rc == 1 and "GATE: FAILED" in out
    rc, _, _ = analyze(capsys, *base, "--max-moved-fraction", "0.99")
    assert rc == 0
    rc, _, _ = analyze(capsys, *base, "--max-moved-fraction", "0.01", "--format", "markdown")
    assert rc == 1


def test_a_topic_named_twice_is_read_once(
    spark, kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka.create_topic("twice", 2)
    kafka.produce(topic, [(f"t{i}".encode(), 5, None) for i in range(40)])
    report = analyze_json(capsys, kafka, "--topic", topic, "--topic", topic, "--to", "3", "--full")
    assert [t["topic"] for t in report["topics"]] == [topic]
    assert report["topics"][0]["records_scanned"] == 40


def test_sasl_command_config_never_prints_the_secret(
    kafka: Kafka, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over SASL the full scan's read tasks get the JAAS config in their pickled client:
    the password must reach neither the terminal nor Spark's own log.  (A small topic's
    read is the driver's and starts no JVM; the moved keys' rows go through Spark, so
    this run starts it and Spark's log is written.)"""
    spark_log = tmp_path / "spark.log"
    monkeypatch.setenv("MIGCHECK_SPARK_LOG", str(spark_log))
    if kafka.sasl_bootstrap is None:
        pytest.fail("the broker under test has no SASL_PLAINTEXT listener")
    topic = kafka.create_topic("secure", 2)
    kafka.produce(topic, [(f"s{i}".encode(), 5, None) for i in range(100)])
    jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required"
    good, bad = tmp_path / "good.properties", tmp_path / "bad.properties"
    good.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config={jaas} username="alice" password="alice-secret";\n'
    )
    bad.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config={jaas} username="alice" password="Wr0ng-pa55";\n'
    )
    r = cli(
        "analyze",
        "--bootstrap-server",
        kafka.sasl_bootstrap,
        "--command-config",
        str(good),
        "--topic",
        topic,
        "--to",
        "3",
        "--full",
        "--moved-keys-out",
        str(tmp_path / "moved.csv"),
        "--format",
        "json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["topics"][0]["records_scanned"] == 100
    assert "alice-secret" not in r.stdout + r.stderr
    assert "default log level" in spark_log.read_text()  # the JVM wrote this file
    assert "alice-secret" not in spark_log.read_text()
    r = cli(
        "analyze",
        "--bootstrap-server",
        kafka.sasl_bootstrap,
        "--command-config",
        str(bad),
        "--topic",
        topic,
        "--to",
        "3",
    )
    assert r.returncode == 2
    assert "Wr0ng-pa55" not in r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("migcheck: error: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--topic", "no-such-topic", "--to", "8"], "does not exist"),
        (["--topic", "{topic}", "--to", "2"], "Kafka can only add partitions"),
        (["--topic", "{topic}", "--to", "8", "--moved-keys-out", "x.csv"], "needs --full"),
        (["--to", "8"], "--topic is required"),
    ],
)
def test_bad_input_is_one_line_exit_2(kafka: Kafka, args: list[str], message: str) -> None:
    topic = kafka.create_topic("bad", 3)
    r = cli(
        "analyze",
        "--bootstrap-server",
        kafka.bootstrap,
        *[a.replace("{topic}", topic) for a in args],
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("migcheck: error: ") and message in lines[-1], r.stderr
    assert "Traceback" not in r.stderr


def test_unreachable_cluster_is_one_line_exit_2() -> None:
    r = cli("analyze", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--to", "8")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("migcheck: error: cannot reach Kafka")


def test_keys_file_matches_the_oracle(
    spark, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    keys = [f"acct-{i}".encode() for i in range(400)] + [b"\x00\xff"]
    export = tmp_path / "payments.csv"
    with export.open("w") as f:
        f.write("key,partition,value_size\n")
        for k in keys:
            f.write(f"{k.hex()},{java_partition(k, 6)},10\n")
    rc, out, err = analyze(
        capsys, "--keys-file", str(export), "--partitions", "6", "--to", "9", "--format", "json"
    )
    assert rc == 0, err
    (t,) = json.loads(out)["topics"]
    assert t["topic"] == "payments" and t["conformance"] == 1.0
    moved = [k for k in keys if java_partition(k, 9) != java_partition(k, 6)]
    assert t["candidates"][0]["moved_keys"] == len(moved)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_keys_file_formats_with_master_and_conf(tmp_path: Path, suffix: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys = [f"id-{i}" for i in range(300)]
    rows = {
        "key": keys,
        "partition": [java_partition(k.encode(), 5) for k in keys],
        "topic": ["ledger"] * len(keys),
    }
    export = tmp_path / f"export{suffix}"
    if suffix == ".parquet":
        pq.write_table(pa.table(rows), export)
    else:
        export.write_text(
            "".join(json.dumps({k: rows[k][i] for k in rows}) + "\n" for i in range(len(keys)))
        )
    r = cli(
        "analyze",
        "--keys-file",
        str(export),
        "--key-encoding",
        "utf8",
        "--partitions",
        "5",
        "--to",
        "10",
        "--format",
        "json",
        "--master",
        "local[1]",
        "--conf",
        "spark.sql.shuffle.partitions=3",
    )
    assert r.returncode == 0, r.stderr
    (t,) = json.loads(r.stdout)["topics"]
    assert t["topic"] == "ledger" and t["records_scanned"] == 300
    moved = [k for k in keys if java_partition(k.encode(), 10) != java_partition(k.encode(), 5)]
    assert t["candidates"][0]["moved_keys"] == len(moved)
