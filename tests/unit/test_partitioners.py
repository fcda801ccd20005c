"""The partitioners are bit-exact: Kafka's own vectors and independent implementations agree.

Expected values never come from migcheck: they come from Kafka's UtilsTest,
kafka-python's murmur2, zlib's CRC-32 and an FNV-1a written here from its
published definition, with Sarama's signed-modulo rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2
from oracles import (
    crc_partition,
    fnv1a_32,
    franz_sarama_partition,
    java_partition,
    sarama_crc32_partition,
    sarama_hash_partition,
    sarama_reference_partition,
)

import migcheck
from migcheck import UnhashedKeyError
from migcheck.hashing import kernels
from migcheck.model.partitioner import PartitionerChoice

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


def test_the_choices_are_auto_then_every_partitioner_in_the_registrys_order() -> None:
    """``--partitioner``'s choices (its help lists them so), written out by hand."""
    assert [c.value for c in PartitionerChoice] == [
        "auto", "murmur2", "murmur2_random", "consistent", "consistent_random", "fnv1a",
        "fnv1a_random", "kafkajs-legacy", "sarama-reference", "sarama-crc32",
        "franz-sarama-fnv1a", "kafka-rust",
    ]  # fmt: skip
    named = [c for c in PartitionerChoice if c is not PartitionerChoice.AUTO]
    assert list(migcheck.PARTITIONERS) == named
    assert all(type(p.name) is PartitionerChoice for p in migcheck.PARTITIONERS.values())


def test_the_cli_offers_the_values_and_hands_the_command_a_member() -> None:
    from migcheck.cli.common import partitioner_choices, partitioner_member

    assert partitioner_choices().choices[:2] == ("auto", "murmur2")
    assert "auto" not in partitioner_choices(auto=False).choices
    chosen = partitioner_member(None, None, "kafkajs-legacy")  # type: ignore[arg-type]
    assert chosen is PartitionerChoice.KAFKAJS_LEGACY


# --- the clients' own partitioners (issue 25) ------------------------------------------

#: Partitions the real clients chose, computed ONCE by running them (never migcheck):
#: ``fixtures/clients/kafkajs/client.js partitions N`` (KafkaJS 2.2.4's
#: Partitioners.LegacyPartitioner), ``fixtures/clients/go`` (Sarama v1.61.1's
#: NewReferenceHashPartitioner and NewCustomHashPartitioner(crc32.NewIEEE), franz-go
#: v1.22.2's StickyKeyPartitioner(SaramaHasher(fnv32a)), kafka-go v0.4.51's ReferenceHash)
#: and ``fixtures/clients/rust`` (the kafka crate 0.10.0's DefaultHasher and rule), over 54
#: keys: binary keys of every length 0..40, text, non-ASCII text and a key whose FNV-1a is
#: INT_MIN.  ``raw`` holds hashes the clients expose: KafkaJS's legacy murmur2 module (its
#: signed return), franz-go's SaramaHasher at n = 2**32 (the uint32 hash itself), and the
#: kafka crate's XxHash32 at n = 2**32 - 1.  ``null`` is a key the client does not hash.
CLIENT_VECTORS = json.loads((Path(__file__).parent / "client_vectors.json").read_text())
CLIENT_KEYS = [bytes.fromhex(k) for k in CLIENT_VECTORS["keys"]]
#: migcheck's name for each client program's partitioner (kafka-go's ReferenceHash is
#: Sarama's reference partitioner).
CLIENT_NAMES = {
    "kafkajs-legacy": "kafkajs-legacy",
    "sarama-reference": "sarama-reference",
    "kafkago-reference": "sarama-reference",
    "sarama-crc32": "sarama-crc32",
    "franz-sarama-fnv1a": "franz-sarama-fnv1a",
    "kafka-rust": "kafka-rust",
}


@pytest.mark.parametrize("client", sorted(CLIENT_NAMES))
@pytest.mark.parametrize("n", CLIENT_VECTORS["counts"])
def test_partitions_match_the_real_clients(client: str, n: int) -> None:
    expected = [-1 if p is None else p for p in CLIENT_VECTORS["partitions"][client][str(n)]]
    got = migcheck.partition_array(CLIENT_KEYS, n, CLIENT_NAMES[client])
    assert got.tolist() == expected


def test_raw_hashes_match_the_real_clients() -> None:
    raw = CLIENT_VECTORS["raw"]
    js = [h % 2**32 for h in raw["kafkajs-legacy"]]
    assert _raw(kernels.MURMUR2_KAFKAJS, CLIENT_KEYS) == js
    assert _raw(kernels.FNV1A, CLIENT_KEYS) == raw["franz-sarama-fnv1a"]
    rust = raw["kafka-rust"]
    hashed = [k for k, h in zip(CLIENT_KEYS, rust, strict=True) if h is not None]
    # n = 2**32 - 1 leaves every hash but 2**32 - 1 itself as it is
    assert [h % (2**32 - 1) for h in _raw(kernels.XXHASH32, hashed)] == [
        h for h in rust if h is not None
    ]


def _raw(hash_id: int, keys: list[bytes]) -> list[int]:
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    out = np.empty(len(keys), dtype=np.int64)
    kernels.raw_hashes(hash_id, offsets, data, out)
    return out.tolist()


def test_published_vectors() -> None:
    """Each hash's published check values: the xxHash specification's XXH32("", 0),
    CRC-32's check value, FNV-1a's offset basis and the FNV page's "a"."""
    assert _raw(kernels.XXHASH32, [b""]) == [0x02CC5D05]
    assert _raw(kernels.CRC32, [b"123456789"]) == [0xCBF43926]
    assert _raw(kernels.FNV1A, [b"", b"a"]) == [0x811C9DC5, 0xE40C292C]


def test_kafkajs_legacy_differs_from_java_as_the_issue_says() -> None:
    # Key "0": Kafka's murmur2 and KafkaJS's legacy one (its spec, and the issue).
    assert migcheck.murmur2(b"0") == 971027396
    assert migcheck.placement_array([b"0"], "kafkajs-legacy").tolist() == [272173970]


#: KafkaJS's own test data, src/producer/partitioners/legacy/murmur2.spec.js (signed).
KAFKAJS_LEGACY_SPEC = {
    "0": 272173970,
    "1": 1311020360,
    "128": 2053105854,
    "2187": -2081355488,
    "16384": 204404061,
    "78125": -677491393,
    "279936": -622460209,
    "823543": 651276451,
    "2097152": 944683677,
    "4782969": -892695770,
    "10000000": -1778616326,
    "19487171": -518311627,
    "35831808": 556972389,
    "62748517": -233806557,
    "105413504": -109398538,
    "170859375": 102939717,
}


def test_kafkajs_legacy_matches_its_own_spec() -> None:
    spec = KAFKAJS_LEGACY_SPEC
    got = _raw(kernels.MURMUR2_KAFKAJS, [k.encode() for k in spec])
    assert [h - 2**32 if h >= 2**31 else h for h in got] == list(spec.values())


@settings(max_examples=300, deadline=None)
@given(key=keys_st, n=counts_st)
def test_go_rules_match_their_sources(key: bytes, n: int) -> None:
    assert migcheck.partition(key, n, "sarama-reference") == sarama_reference_partition(key, n)
    assert migcheck.partition(key, n, "sarama-crc32") == sarama_crc32_partition(key, n)
    assert migcheck.partition(key, n, "franz-sarama-fnv1a") == franz_sarama_partition(key, n)


def test_kafka_rust_never_hashes_an_empty_key() -> None:
    # kafka-rust's producer turns an empty key into a null key (producer.rs, to_option).
    with pytest.raises(UnhashedKeyError):
        migcheck.partition(b"", 6, "kafka-rust")
    for name in ("kafkajs-legacy", "sarama-reference", "sarama-crc32", "franz-sarama-fnv1a"):
        assert migcheck.partition(b"", 6, name) >= 0


def test_compiled_kernels_equal_interpreted() -> None:
    """Each kernel compiled by numba gives what the same source gives interpreted."""
    keys = [bytes((i * 31 + j) % 256 for j in range(i % 45)) for i in range(120)]
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    for p in migcheck.PARTITIONERS.values():
        a, b = np.empty(len(keys), np.int32), np.empty(len(keys), np.int32)
        kernels._partitions(p.hash_id, p.rule, offsets, data, 1009, a)  # the plain Python source
        kernels._compiled(p.hash_id)["_partitions"](p.hash_id, p.rule, offsets, data, 1009, b)
        assert a.tolist() == b.tolist(), p.name


@pytest.mark.parametrize("keys", [2, kernels.INTERPRETED_MAX_KEYS + 1])
def test_an_unknown_hash_id_is_refused_not_hashed_as_another(keys: int) -> None:
    """A hash id with no branch in the kernel (a partitioner added without its hash)
    raises, interpreted (a few keys) and compiled alike, instead of hashing as FNV-1a."""
    array = pa.array([b"key-%d" % i for i in range(keys)], type=pa.binary())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[: keys + 1]
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)
    known = max(kernels.MURMUR2, kernels.CRC32, kernels.FNV1A, kernels.MURMUR2_KAFKAJS,
                kernels.XXHASH32)  # fmt: skip
    out = np.zeros(keys, dtype=np.int64)
    kernels.raw_hashes(kernels.FNV1A, offsets, data, out)  # the last branch still hashes
    assert out.any()
    with pytest.raises(ValueError, match="unknown hash id"):
        kernels.raw_hashes(known + 1, offsets, data, out)
