"""Every client partitioner of issue 25, proven by the real clients writing real topics.

KafkaJS (npm), Sarama, franz-go and kafka-go (Go modules) write the same keys with their
own producers and partitioners into an n- and an m-partition topic; the truth is where
the broker holds each key, read back by Kafka's Java consumer.  kafka-rust speaks only
Produce v0, which Kafka 4 refuses, so its own DefaultHasher and rule choose each key's
partition (``fixtures/clients/rust``) and Kafka's Java producer writes it there.
``analyze`` on the n-partition topic must move exactly the keys the client moved, and
``copy`` of it into an m-partition topic must put each key where the client put it in
its own m-partition topic.  Nothing expected comes from migcheck.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from clients import Clients, build_all, client_partitions, client_produce
from kafkatest import Kafka
from oracles import run_cli

import migcheck
from migcheck.cli import main

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

N, M = 5, 7

#: client program -> migcheck's name for its partitioner (kafka-go's ReferenceHash is Sarama's)
CASES = {
    "kafkajs-legacy": "kafkajs-legacy",
    "sarama-reference": "sarama-reference",
    "kafkago-reference": "sarama-reference",
    "sarama-crc32": "sarama-crc32",
    "franz-sarama-fnv1a": "franz-sarama-fnv1a",
    "kafka-rust": "kafka-rust",
}


@pytest.fixture(scope="session")
def clients() -> Iterator[Clients]:
    """The client programs, built once per session (cached between runs)."""
    try:
        yield build_all()
    except Exception as e:  # npm, go, cargo: the oracles themselves could not be built
        pytest.fail(f"cannot build the client programs: {e}", pytrace=False)


def _keys() -> list[bytes]:
    """Binary keys of every length 0..40, text, non-ASCII text; the same every run."""
    rng = random.Random(25)
    keys = [b""]
    for length in range(1, 41):
        keys += [bytes(rng.randrange(256) for _ in range(length)) for _ in range(10)]
    keys += [f"user-{i}".encode() for i in range(60)]
    keys += [t.encode() for t in ("ключ", "日本語のキー", "ü", "🙂🙃", "Ωmega-∑", "naïve café")]
    return list(dict.fromkeys(keys))


KEYS = _keys()


def write(
    kafka: Kafka, clients: Clients, client: str, topic: str, n: int, keys: Sequence[bytes]
) -> None:
    """One record per key, placed by ``client``'s own partitioner."""
    if client == "kafka-rust":
        chosen = client_partitions([*clients.rust, "partitions", str(n)], keys)
        # the crate sends an empty key as a null key, to a partition of its choice
        kafka.produce(
            topic,
            [(k if p is not None else None, b"v", p) for k, p in zip(keys, chosen, strict=True)],
        )
        return
    if client == "kafkajs-legacy":
        cmd = [*clients.kafkajs, "produce", kafka.bootstrap, topic]
    else:
        cmd = [*clients.go, "produce", client, kafka.bootstrap, topic]
    client_produce(cmd, keys)


class Written:
    """Each client's N- and M-partition topics of :data:`KEYS`, written by the client the
    first time a test asks for them and shared by the tests after it (analyze, copy)."""

    def __init__(self, kafka: Kafka, clients: Clients) -> None:
        self.kafka, self.clients = kafka, clients
        self.topics: dict[str, tuple[str, str]] = {}

    def __call__(self, client: str) -> tuple[str, str]:
        if client not in self.topics:
            small = self.kafka.create_topic(f"{client}-n", N)
            large = self.kafka.create_topic(f"{client}-m", M)
            write(self.kafka, self.clients, client, small, N, KEYS)
            write(self.kafka, self.clients, client, large, M, KEYS)
            self.topics[client] = small, large
        return self.topics[client]


@pytest.fixture(scope="session")
def written(kafka: Kafka, clients: Clients) -> Written:
    """The clients' topics, shared by every test of the session."""
    return Written(kafka, clients)


def placed(kafka: Kafka, topic: str) -> dict[bytes, int]:
    """Each keyed record's partition as the broker holds it (Kafka's Java consumer)."""
    out: dict[bytes, int] = {}
    for d in kafka.dump(topic):
        if d.key is not None:
            assert out.setdefault(d.key, d.partition) == d.partition, "a key in two partitions"
    return out


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The real CLI in this process (sharing the test Spark session)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


def analyze(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return cli(capsys, "analyze", *args)


def moved_csv(path: Path) -> set[tuple[bytes, int, int]]:
    with path.open() as f:
        return {
            (bytes.fromhex(r["key_hex"]), int(r["partition"]), int(r["new_partition"]))
            for r in csv.DictReader(f)
        }


@pytest.mark.parametrize("client", sorted(CASES))
def test_auto_detects_the_client_and_moves_exactly_the_keys_it_moves(
    spark, kafka: Kafka, written: Written, client: str, capsys, tmp_path: Path
) -> None:
    small, large = written(client)
    before, after = placed(kafka, small), placed(kafka, large)
    assert before.keys() == after.keys()
    truth = {(k, p, after[k]) for k, p in before.items() if after[k] != p}
    out_csv = tmp_path / "moved.csv"
    rc, out, err = analyze(
        capsys,
        "--bootstrap-server",
        kafka.bootstrap,
        "--topic",
        small,
        "--to",
        str(M),
        "--full",
        "--partitioner",
        "auto",
        "--format",
        "json",
        "--moved-keys-out",
        str(out_csv),
    )
    assert rc == 0, err
    (t,) = json.loads(out)["topics"]
    assert t["partitioner"] == CASES[client] and t["conformance"] == 1.0
    assert t["clients"] == migcheck.PARTITIONERS[CASES[client]].clients
    assert t["placed_alike"] == []
    assert moved_csv(out_csv) == truth
    assert t["candidates"][0]["moved_keys"] == len(truth)


@pytest.mark.parametrize("client", sorted(CASES))
def test_copy_puts_every_key_where_the_client_puts_it_at_the_new_count(
    spark, kafka: Kafka, written: Written, client: str, capsys
) -> None:
    """The copy's destination (M partitions) against the client's own M-partition topic:
    each key in the partition the client itself chose for it there."""
    small, large = written(client)
    into = kafka.create_topic(f"{client}-copy", M)
    rc, out, err = cli(
        capsys, "copy", "--bootstrap-server", kafka.bootstrap, "--topic", small, "--into", into
    )
    assert rc == 0, err[-2000:]
    assert f"(partitioner {CASES[client]})" in out
    assert "missing 0, duplicated 0, misplaced 0: OK" in out
    assert placed(kafka, into) == placed(kafka, large)
    # every record once: kafka-rust's empty key went as a null key, copied round-robin
    assert len(kafka.dump(into)) == len(kafka.dump(small))


def _client_command(clients: Clients, client: str, n: int) -> list[str]:
    """The client program that prints the partition it picks for each key among ``n``."""
    if client == "kafka-rust":
        return [*clients.rust, "partitions", str(n)]
    if client == "kafkajs-legacy":
        return [*clients.kafkajs, "partitions", str(n)]
    return [*clients.go, "partitions", client, str(n)]


@pytest.mark.parametrize("client", sorted(CASES))
def test_partition_agrees_with_the_client_on_10000_keys(clients: Clients, client: str) -> None:
    """``migcheck partition`` as a user runs it, the keys as hex on stdin: one command per
    pair of counts (``--partitions`` and ``--to``) for all 10,000 keys."""
    rng = random.Random(client)
    keys = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(10_000)]
    stdin = "".join(k.hex() + "\n" for k in keys)
    for n, to in ((3, 8), (12, 1000)):
        r = run_cli(
            "partition",
            "--partitioner",
            CASES[client],
            "--partitions",
            str(n),
            "--to",
            str(to),
            "--key-encoding",
            "hex",
            "--format",
            "json",
            "-",
            stdin=stdin,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        rows = json.loads(r.stdout)
        assert [bytes.fromhex(row["key_hex"]) for row in rows] == keys
        assert [row["partition"] for row in rows] == client_partitions(
            _client_command(clients, client, n), keys
        )
        assert [row["new_partition"] for row in rows] == client_partitions(
            _client_command(clients, client, to), keys
        )


def test_a_topic_two_clients_wrote_gets_the_share_table_and_exit_3(
    spark, kafka: Kafka, clients: Clients, capsys
) -> None:
    topic = kafka.create_topic("mixed", N)
    half = len(KEYS) // 2
    write(kafka, clients, "kafkajs-legacy", topic, N, KEYS[1:half])
    write(kafka, clients, "sarama-crc32", topic, N, KEYS[half:])
    rc, out, err = analyze(
        capsys,
        "--bootstrap-server",
        kafka.bootstrap,
        "--topic",
        topic,
        "--to",
        str(M),
        "--full",
        "--format",
        "json",
    )
    assert rc == 3  # cannot predict
    (t,) = json.loads(out)["topics"]
    assert not t["predictable"] and t["candidates"] == []
    shares = {tuple(s["partitioners"]): s["share"] for s in t["mixed_shares"]}
    assert set(shares) == {
        ("kafkajs-legacy",),
        ("sarama-crc32",),
        ("kafkajs-legacy", "sarama-crc32"),
    }
    assert sum(shares.values()) == pytest.approx(1.0)
    # the keys each wrote, less those both would have put in the same partition
    assert 0.35 < shares[("kafkajs-legacy",)] < 0.5 and 0.35 < shares[("sarama-crc32",)] < 0.5
    (line,) = [x for x in err.splitlines() if x.startswith(f"migcheck: {topic}:")]
    assert "two clients" in line and "kafkajs-legacy" in line and "sarama-crc32" in line
    assert "%" in line


def test_fnv1a_masked_and_unsigned_cannot_be_told_apart_at_a_power_of_two(
    spark, kafka: Kafka, clients: Clients, capsys
) -> None:
    """At 4 partitions Sarama's reference hash and franz-go's SaramaHasher put every key
    alike; at 8 too, so the prediction stands; at 6 they differ, so it is ambiguous."""
    topic = kafka.create_topic("ambiguous", 4)
    write(kafka, clients, "sarama-reference", topic, 4, KEYS)
    base = ("--bootstrap-server", kafka.bootstrap, "--topic", topic, "--full", "--format", "json")
    rc, out, err = analyze(capsys, *base, "--to", "8")
    assert rc == 0, err
    (t,) = json.loads(out)["topics"]
    assert t["partitioner"] == "sarama-reference"
    assert t["placed_alike"] == ["franz-sarama-fnv1a"]

    rc, out, err = analyze(capsys, *base, "--to", "6")
    assert rc == 3
    (t,) = json.loads(out)["topics"]
    assert not t["predictable"] and t["placed_alike"] == ["franz-sarama-fnv1a"]
    assert (
        "sarama-reference" in t["verdict"]["text"] and "franz-sarama-fnv1a" in t["verdict"]["text"]
    )
    (line,) = [x for x in err.splitlines() if x.startswith(f"migcheck: {topic}:")]
    assert "ambiguous" in line


def test_a_one_partition_topic_is_refused_as_one_partition(spark, kafka: Kafka, capsys) -> None:
    """Every key of a one-partition topic is in partition 0 whatever the partitioner: auto
    cannot choose, and both analyze and copy say so in one line, with the fix."""
    topic = kafka.create_topic("one", 1)
    kafka.produce(topic, [(f"k{i}".encode(), b"v", None) for i in range(200)])
    base = ("--bootstrap-server", kafka.bootstrap, "--topic", topic)
    rc, out, err = analyze(capsys, *base, "--to", "3", "--full", "--format", "json")
    assert rc == 3
    (t,) = json.loads(out)["topics"]
    assert not t["predictable"] and "one partition" in t["verdict"]["text"]
    (line,) = [x for x in err.splitlines() if x.startswith(f"migcheck: {topic}:")]
    assert "one partition" in line and "--partitioner" in line

    into = kafka.create_topic("one-copy", 3)
    rc, _, err = cli(capsys, "copy", *base, "--into", into)
    assert rc == 3 and err.count("\n") == 1, err
    assert f"{topic} has one partition" in err and "--partitioner" in err
    assert kafka.dump(into) == []
