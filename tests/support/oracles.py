"""Independent references that tests take expected values from, written once.

None of them comes from migcheck: Kafka's Java rule through kafka-python's
murmur2, zlib's CRC-32, FNV-1a written here from its published definition with
Sarama's signed-modulo rule (and the Go clients' other rules, read from their
sources), and the real ``migcheck`` process as a user runs it.  The hashes with no
Python reference (KafkaJS's legacy murmur2, XXH32) are held to the clients themselves:
``tests/unit/client_vectors.json`` and the integration tests' client programs.
"""

from __future__ import annotations

import subprocess
import sys
import zlib

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2


def java_partition(key: bytes, n: int) -> int:
    """The Java client's rule, ``toPositive(murmur2(key)) % n``, via kafka-python's murmur2
    (which returns the hash unsigned)."""
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % n


def crc_partition(key: bytes, n: int) -> int:
    """librdkafka consistent: rd_crc32(key) % partition_cnt, unsigned."""
    return zlib.crc32(key) % n


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits, from the published definition (offset basis 2166136261, prime 16777619)."""
    h = 2166136261
    for byte in data:
        h ^= byte
        h = (h * 16777619) % 2**32
    return h


def sarama_hash_partition(key: bytes, n: int) -> int:
    """Sarama's NewHashPartitioner: int32(hash) % n with Go's truncating %, then negate if < 0."""
    h = fnv1a_32(key)
    signed = h - 2**32 if h >= 2**31 else h
    remainder = abs(signed) % n
    partition = -remainder if signed < 0 else remainder  # Go's % keeps the dividend's sign
    return -partition if partition < 0 else partition


def go_signed_mod_abs(h: int, n: int) -> int:
    """Go's ``int32(h) % n`` (truncating, the dividend's sign), negated when negative:
    Sarama's hash partitioner after any 32-bit hash ``h``."""
    signed = h - 2**32 if h >= 2**31 else h
    remainder = abs(signed) % n
    return remainder  # -(negative remainder) and a positive remainder are both |h| % n


def sarama_crc32_partition(key: bytes, n: int) -> int:
    """Sarama's NewCustomHashPartitioner(crc32.NewIEEE): zlib's CRC-32 through Go's
    signed modulo and negation (hashPartitioner.Partition, neither option set)."""
    return go_signed_mod_abs(zlib.crc32(key), n)


def sarama_reference_partition(key: bytes, n: int) -> int:
    """Sarama's NewReferenceHashPartitioner, kafka-go's ReferenceHash:
    ``(int32(fnv1a) & 0x7fffffff) % n``."""
    return (fnv1a_32(key) & 0x7FFFFFFF) % n


def franz_sarama_partition(key: bytes, n: int) -> int:
    """franz-go's SaramaHasher(fnv32a) on 64-bit: ``int(uint32 hash) % n``, never negative."""
    return fnv1a_32(key) % n


def run_cli(
    *args: str, stdin: str | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``migcheck ARGS`` as a separate process, the way a user or a CI job runs it (in
    ``env``, else this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "migcheck", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``migcheck ARGS`` by the real CLI in this process: :func:`run_cli`'s answer without a
    process's start (the interpreter and migcheck's imports: 10 to 25 s each on a loaded
    machine).  For a command that starts no Spark (one that does would start it here, for
    the rest of the session) and whose assertions are its exit code and stdout."""
    from migcheck.cli import main

    capsys.readouterr()  # what the test printed before is not this command's
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_.value.code
    return subprocess.CompletedProcess(["migcheck", *args], int(code or 0), out, err)
