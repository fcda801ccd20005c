"""``migcheck partition``: output, stdin keys, typed keys and one-line errors, as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from oracles import crc_partition, sarama_hash_partition
from oracles import java_partition as java
from oracles import run_cli as run


def test_json_output_with_candidate() -> None:
    keys = ["21", "foobar", "user-1", "user-2", "ключ"]
    r = run("partition", "--partitions", "6", "--to", "8", "--format", "json", *keys)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [row["key"] for row in rows] == keys
    # docs/report-schema.md's "Key placement", in its order (a lookup: no "report" kind)
    assert {tuple(row) for row in rows} == {
        ("key", "key_hex", "partition", "new_partition", "moved")
    }
    for row, key in zip(rows, keys, strict=True):
        raw = key.encode()
        assert row["key_hex"] == raw.hex()
        assert row["partition"] == java(raw, 6)
        assert row["new_partition"] == java(raw, 8)
        assert row["moved"] is (java(raw, 6) != java(raw, 8))


def test_text_output_and_stdin() -> None:
    keys = [f"order-{i}" for i in range(40)]
    r = run("partition", "--partitions", "3", "--to", "4", "-", stdin="\n".join(keys) + "\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["KEY", "PARTITION(3)", "PARTITION(4)", "MOVED"]
    for line, key in zip(lines[1:], keys, strict=True):
        k, p, q, moved = line.split()
        assert (k, int(p), int(q)) == (key, java(key.encode(), 3), java(key.encode(), 4))
        assert moved == ("yes" if int(p) != int(q) else "no")


@pytest.mark.parametrize(
    ("encoding", "text", "raw"),
    [
        ("hex", "00ff10", b"\x00\xff\x10"),
        ("base64", "AP8Q", b"\x00\xff\x10"),
        ("utf8", "plain", b"plain"),
    ],
)
def test_key_encodings(encoding: str, text: str, raw: bytes) -> None:
    r = run("partition", "--partitions", "7", "--key-encoding", encoding, "--format", "json", text)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["partition"] == java(raw, 7)


def test_librdkafka_partitioners() -> None:
    r = run(
        "partition",
        "--partitions",
        "9",
        "--partitioner",
        "consistent_random",
        "--format",
        "json",
        "alpha",
        "beta",
    )
    assert r.returncode == 0, r.stderr
    assert [row["partition"] for row in json.loads(r.stdout)] == [
        crc_partition(b"alpha", 9),
        crc_partition(b"beta", 9),
    ]


def test_empty_key_under_consistent_random_is_unhashed() -> None:
    r = run(
        "partition",
        "--partitions",
        "9",
        "--partitioner",
        "consistent_random",
        "--format",
        "json",
        "",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["partition"] is None


@pytest.mark.parametrize(
    "args",
    [
        ["--partitions", "0", "k"],
        ["--partitions", "-4", "k"],
        ["--partitions", "six", "k"],
        ["--partitions", "2147483648", "k"],
        ["--partitions", "6", "--to", "4", "k"],
        ["--partitions", "6", "--partitioner", "crc64", "k"],
        ["--partitions", "6", "--key-encoding", "hex", "xyz"],
        ["--partitions", "6", "--key-encoding", "base64", "!!!"],
        ["--partitions", "6", "--key-type", "long", "twelve"],
        ["--partitions", "6", "--key-type", "int", "4294967296"],
        ["--partitions", "6", "--key-type", "uuid", "not-a-uuid"],
        ["--partitions", "6"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    r = run("partition", *args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("migcheck: error: "), r.stderr
    assert r.stdout == ""


def test_below_current_count_names_the_rule() -> None:
    r = run("partition", "--partitions", "6", "--to", "4", "k")
    assert "Kafka can only add partitions" in r.stderr


@pytest.mark.parametrize(
    ("partitioner", "oracle"),
    [("murmur2", java), ("consistent", crc_partition), ("fnv1a", sarama_hash_partition)],
)
def test_a_few_keys_are_hashed_without_numba(partitioner: str, oracle: Any) -> None:
    """A lookup of a few keys runs the kernels' source interpreted (no numba import, for a
    fast start) and still agrees with the independent oracles, byte for byte."""
    keys = ["a", "ab", "abc", "abcd", "abcde", "user-1", "ключ", "x" * 37]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "migcheck", "partition", "--partitions",
         "7", "--to", "13", "--partitioner", partitioner, "--format", "json", *keys],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert not {"numba", "pyspark", "pyarrow"} & imported
    rows = json.loads(proc.stdout)
    assert [(r["partition"], r["new_partition"]) for r in rows] == [
        (oracle(k.encode(), 7), oracle(k.encode(), 13)) for k in keys
    ]
