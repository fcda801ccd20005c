"""The partitioners are bit-exact: Kafka's own vectors and independent implementations agree.

Expected values never come from migcheck: they come from Kafka's UtilsTest,
kafka-python's murmur2, zlib's CRC-32 and an FNV-1a written here from its
published definition, with Sarama's signed-modulo rule.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2
from oracles import crc_partition, fnv1a_32, java_partition, sarama_hash_partition

import migcheck
from migcheck import UnhashedKeyError

# Kafka's clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java#testMurmur2
KAFKA_UTILS_TEST_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}

# A key whose 32-bit FNV-1a is exactly 0x80000000 (INT_MIN read as signed), found by a
# brute-force search; test_fnv1a_int_min_key re-checks it with the reference below.
FNV1A_INT_MIN_KEY = bytes.fromhex("f534177a01")

keys_st = st.binary(min_size=0, max_size=100)
counts_st = st.one_of(
    st.integers(min_value=1, max_value=64),
    st.integers(min_value=1, max_value=2**31 - 1),
    st.sampled_from([1, 2, 3, 6, 8, 12, 2**31 - 1, 2**31 - 2, 2**30, 2**16 + 1]),
)


@pytest.mark.parametrize(("key", "expected"), KAFKA_UTILS_TEST_VECTORS.items())
def test_murmur2_matches_kafka_utils_test(key: bytes, expected: int) -> None:
    assert migcheck.murmur2(key) == expected


@settings(max_examples=400, deadline=None)
@given(key=keys_st)
def test_murmur2_matches_kafka_python(key: bytes) -> None:
    assert migcheck.murmur2(key) % 2**32 == kafka_python_murmur2(key)


@settings(max_examples=400, deadline=None)
@given(key=keys_st, n=counts_st)
def test_murmur2_partition_matches_java_rule(key: bytes, n: int) -> None:
    assert migcheck.partition(key, n) == java_partition(key, n)
    assert migcheck.partition(key, n, "murmur2_random") == java_partition(key, n)


@settings(max_examples=400, deadline=None)
@given(key=keys_st, n=counts_st)
def test_consistent_matches_zlib_crc32(key: bytes, n: int) -> None:
    assert migcheck.partition(key, n, "consistent") == crc_partition(key, n)
    if key:
        assert migcheck.partition(key, n, "consistent_random") == crc_partition(key, n)


@settings(max_examples=400, deadline=None)
@given(key=keys_st, n=counts_st)
def test_fnv1a_matches_sarama_rule(key: bytes, n: int) -> None:
    assert migcheck.partition(key, n, "fnv1a") == sarama_hash_partition(key, n)
    assert migcheck.partition(key, n, "fnv1a_random") == sarama_hash_partition(key, n)


def test_every_length_and_byte_value() -> None:
    """Every length 0..100 and every byte value 0..255, against all three references."""
    keys = [
        bytes((i * 7 + j) % 256 for j in range(length)) for length in range(101) for i in (0, 1)
    ]
    keys += [bytes([b]) * 5 for b in range(256)]
    for n in (1, 6, 7, 1000, 2**31 - 1):
        got = migcheck.partition_array(keys, n)
        assert got.tolist() == [java_partition(k, n) for k in keys]
        got = migcheck.partition_array(keys, n, "consistent")
        assert got.tolist() == [crc_partition(k, n) for k in keys]
        got = migcheck.partition_array(keys, n, "fnv1a")
        assert got.tolist() == [sarama_hash_partition(k, n) for k in keys]


def test_fnv1a_int_min_key() -> None:
    """|INT_MIN| is 2**31 for librdkafka (uint32 return) and Sarama (abs after %)."""
    assert fnv1a_32(FNV1A_INT_MIN_KEY) == 0x80000000
    for n in (3, 5, 6, 7, 10, 2**31 - 1):
        expected = 2**31 % n
        assert sarama_hash_partition(FNV1A_INT_MIN_KEY, n) == expected
        assert migcheck.partition(FNV1A_INT_MIN_KEY, n, "fnv1a") == expected


def test_null_keys_are_never_hashed() -> None:
    for name in migcheck.PARTITIONERS:
        got = migcheck.partition_array([None, b"k", None], 6, name)
        assert got[0] == -1 and got[2] == -1
        assert got[1] >= 0
        with pytest.raises(UnhashedKeyError):
            migcheck.partition(None, 6, name)  # type: ignore[arg-type]


def test_empty_key_only_unhashed_for_consistent_random() -> None:
    # librdkafka sends an empty key to the sticky partitioner only under consistent_random.
    with pytest.raises(UnhashedKeyError):
        migcheck.partition(b"", 6, "consistent_random")
    assert migcheck.partition(b"", 6, "consistent") == 0  # crc32(b"") == 0
    assert migcheck.partition(b"", 6) == java_partition(b"", 6)  # Java hashes an empty key
    assert migcheck.partition_array([b"", b"x"], 6, "consistent_random").tolist() == [
        -1,
        crc_partition(b"x", 6),
    ]


def test_arrow_layouts_agree() -> None:
    """string, large_binary, sliced, chunked and view arrays give the same partitions."""
    words = [f"key-{i}" for i in range(50)]
    raw = [w.encode() for w in words]
    expected = [java_partition(k, 12) for k in raw]
    layouts = [
        pa.array(words, pa.string()),
        pa.array(words, pa.large_string()),
        pa.array(raw, pa.large_binary()),
        pa.chunked_array([pa.array(raw[:20]), pa.array(raw[20:])]),
        pa.array(raw, pa.binary_view()),
    ]
    for arr in layouts:
        assert migcheck.partition_array(arr, 12).tolist() == expected
    sliced = pa.array(raw, pa.binary()).slice(10, 15)
    assert migcheck.partition_array(sliced, 12).tolist() == expected[10:25]
    assert migcheck.partition_array(pa.array([], pa.binary()), 12).tolist() == []


def test_placement_serves_every_candidate() -> None:
    keys = [f"user-{i}".encode() for i in range(200)]
    placement = migcheck.placement_array(keys)
    for n in (6, 8, 12):
        assert (placement % n).tolist() == [java_partition(k, n) for k in keys]
    assert placement.dtype == np.int64


@pytest.mark.parametrize(
    ("n", "error"),
    [(0, ValueError), (-3, ValueError), (2**31, ValueError), (True, TypeError), (2.0, TypeError)],
)
def test_bad_partition_counts(n: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        migcheck.partition(b"k", n)  # type: ignore[arg-type]


def test_unknown_partitioner() -> None:
    with pytest.raises(ValueError, match=r"unknown partitioner 'crc64'.*murmur2"):
        migcheck.partition(b"k", 3, "crc64")
