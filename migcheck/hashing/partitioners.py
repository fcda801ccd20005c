"""Which partition a producer picks for a key: the partitioner rules and the public API.

A partitioner is a hash (one of the kernels in :mod:`migcheck.hashing.kernels`), the
placement rule that makes the hash a non-negative number, plus the client's rules about
which keys it hashes at all.  Every client in scope sends a
*null* key to its sticky/random partitioner instead of hashing it, and
librdkafka's ``consistent_random`` (its default) does the same for an *empty*
key.  Such records have no predictable partition, so migcheck reports them and
never hashes them: the vectorized API marks them ``-1`` and the scalar API
raises :class:`UnhashedKeyError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from migcheck.errors import UnhashedKeyError
from migcheck.hashing import kernels
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.topics import check_partition_count

if TYPE_CHECKING:  # pyarrow is imported only for Arrow input: a one-key lookup skips it
    import pyarrow as pa

#: Keys as the public functions take them: an Arrow array, or Python bytes (None = null).
Keys: TypeAlias = "pa.Array | pa.ChunkedArray | Iterable[bytes | None]"


#: Marks a record whose key the partitioner does not hash (null key, or empty key
#: under ``consistent_random``) in the vectorized results.
UNHASHED = -1


@dataclass(frozen=True)
class Partitioner:
    """A client's keyed-record partitioner: which hash (``hash_id``, one of the kernels'
    hash ids), how the hash becomes a non-negative number (the placement ``rule``),
    which keys it hashes, the clients that place keys this way (in the words their
    users know: shown in reports), and whether ``--partitioner auto`` scores it.

    ``auto_detect`` is off for a partitioner that places every key exactly as another
    one does (``murmur2_random`` is ``murmur2`` for keyed records): scoring both would
    only make every detection ambiguous.
    """

    name: PartitionerChoice  # never AUTO: a choice, not a partitioner
    hash_id: int
    rule: int
    hashes_empty_key: bool
    clients: str
    auto_detect: bool = False


#: Every partitioner by its name (a :class:`PartitionerChoice`'s, in the enum's order).
PARTITIONERS: dict[str, Partitioner] = {
    p.name: p
    for p in (
        Partitioner(
            PartitionerChoice.MURMUR2,
            kernels.MURMUR2,
            kernels.TO_POSITIVE,
            True,
            "Java client default (BuiltInPartitioner), kafka-python, aiokafka, librdkafka "
            "murmur2, KafkaJS DefaultPartitioner, franz-go default, kafka-go Murmur2Balancer",
            auto_detect=True,
        ),
        Partitioner(
            PartitionerChoice.MURMUR2_RANDOM,
            kernels.MURMUR2,
            kernels.TO_POSITIVE,
            True,
            "librdkafka murmur2_random",
        ),
        Partitioner(
            PartitionerChoice.CONSISTENT,
            kernels.CRC32,
            kernels.UNSIGNED,
            True,
            "librdkafka consistent (CRC-32), kafka-go CRC32Balancer",
        ),
        Partitioner(
            PartitionerChoice.CONSISTENT_RANDOM,
            kernels.CRC32,
            kernels.UNSIGNED,
            False,
            "librdkafka consistent_random, librdkafka's default (CRC-32; "
            "confluent-kafka-python, -go, -dotnet)",
            # stands for the CRC-32 family: it leaves empty keys unhashed, which is
            # right for both librdkafka CRC partitioners
            auto_detect=True,
        ),
        Partitioner(
            PartitionerChoice.FNV1A,
            kernels.FNV1A,
            kernels.ABS,
            True,
            "librdkafka fnv1a, Sarama's default hash, kafka-go Hash",
            auto_detect=True,
        ),
        Partitioner(
            PartitionerChoice.FNV1A_RANDOM,
            kernels.FNV1A,
            kernels.ABS,
            True,
            "librdkafka fnv1a_random",
        ),
        # KafkaJS's partitioner checks only for a null (or undefined) key: "" is hashed.
        Partitioner(
            PartitionerChoice.KAFKAJS_LEGACY,
            kernels.MURMUR2_KAFKAJS,
            kernels.TO_POSITIVE,
            True,
            "KafkaJS Partitioners.LegacyPartitioner (KafkaJS v1's default)",
            auto_detect=True,
        ),
        # Sarama's hash partitioners send only a nil key to the random partitioner;
        # kafka-go's ReferenceHash only a nil key to its random balancer.
        Partitioner(
            PartitionerChoice.SARAMA_REFERENCE,
            kernels.FNV1A,
            kernels.TO_POSITIVE,
            True,
            "Sarama NewReferenceHashPartitioner, kafka-go ReferenceHash",
            auto_detect=True,
        ),
        Partitioner(
            PartitionerChoice.SARAMA_CRC32,
            kernels.CRC32,
            kernels.ABS,
            True,
            "Sarama NewCustomHashPartitioner(crc32.NewIEEE)",
            auto_detect=True,
        ),
        # franz-go's StickyKeyPartitioner hashes every non-nil key, an empty one too.
        Partitioner(
            PartitionerChoice.FRANZ_SARAMA_FNV1A,
            kernels.FNV1A,
            kernels.UNSIGNED,
            True,
            "franz-go StickyKeyPartitioner(SaramaHasher(fnv32a)) (64-bit)",
            auto_detect=True,
        ),
        # kafka-rust sends an empty key as a null key (producer.rs to_option): never hashed.
        Partitioner(
            PartitionerChoice.KAFKA_RUST,
            kernels.XXHASH32,
            kernels.UNSIGNED,
            False,
            "kafka-rust (the kafka crate) DefaultPartitioner",
            auto_detect=True,
        ),
    )
}

#: What ``--partitioner auto`` scores, in order of preference: the registry's order.
AUTO_CANDIDATES: tuple[PartitionerChoice, ...] = tuple(
    p.name for p in PARTITIONERS.values() if p.auto_detect
)


def get_partitioner(name: str) -> Partitioner:
    """Look a partitioner up by name, with an error that lists the valid names."""
    try:
        return PARTITIONERS[name]
    except KeyError:
        valid = ", ".join(PARTITIONERS)
        raise ValueError(f"unknown partitioner {name!r} (choose from {valid})") from None


# --- Arrow plumbing -------------------------------------------------------------


def _is_arrow(keys: object) -> bool:
    """An Arrow array, told apart without importing pyarrow when it is not loaded."""
    return type(keys).__module__.startswith("pyarrow")


def to_binary_array(keys: pa.Array | pa.ChunkedArray | Iterable[bytes | None]) -> pa.Array:
    """Return ``keys`` as one Arrow binary or large_binary array, copying only when needed.

    Strings are UTF-8 bytes in Arrow already, so a string array is reinterpreted,
    not re-encoded.  View and fixed-size layouts are cast to the offsets layout
    the kernels read.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if not isinstance(keys, pa.Array):
        keys = pa.array(list(keys), type=pa.binary())
    t = keys.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return keys
    if pa.types.is_string(t):
        return keys.view(pa.binary())
    if pa.types.is_large_string(t):
        return keys.view(pa.large_binary())
    if (
        pa.types.is_fixed_size_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_string_view(t)
        or pa.types.is_null(t)
    ):
        return pc.cast(keys, pa.large_binary())
    raise TypeError(f"keys must be a binary or string array, not {t}")


def arrow_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (for this slice) and data buffers of a binary array, as numpy views."""
    import pyarrow as pa

    _, offsets_buf, data_buf = arr.buffers()
    offset_type = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    n = len(arr)
    if offsets_buf is None:  # an empty array may have no buffers at all
        return np.zeros(n + 1, dtype=offset_type), np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[arr.offset : arr.offset + n + 1]
    data = np.zeros(0, dtype=np.uint8) if data_buf is None else np.frombuffer(data_buf, np.uint8)
    return offsets, data


def _unhashed_mask(arr: pa.Array, partitioner: Partitioner) -> np.ndarray | None:
    """Which entries the partitioner does not hash, or None when it hashes them all."""
    import pyarrow.compute as pc

    mask = None
    if arr.null_count:
        mask = np.asarray(arr.is_null())
    if not partitioner.hashes_empty_key:
        empty = np.asarray(pc.equal(pc.binary_length(arr), 0).fill_null(False))
        mask = empty if mask is None else (mask | empty)
    return mask


def _python_buffers(keys: Iterable[bytes | None]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Offsets and data for a list of Python keys (a null key hashes as empty, then is masked)."""
    listed = [None if k is None else bytes(k) for k in keys]
    lengths = np.fromiter((0 if k is None else len(k) for k in listed), np.int64, len(listed))
    offsets = np.zeros(len(listed) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(k for k in listed if k is not None), dtype=np.uint8)
    return offsets, data, listed


def _key_buffers(keys: Keys, p: Partitioner) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The kernels' input (offsets, data) and which keys ``p`` does not hash (None: all hashed).

    Python lists are laid out with numpy alone, so a lookup of a few keys never
    loads pyarrow; Arrow arrays are read in place.
    """
    if _is_arrow(keys):
        arr = to_binary_array(keys)
        offsets, data = arrow_buffers(arr)
        return offsets, data, _unhashed_mask(arr, p)
    offsets, data, listed = _python_buffers(keys)
    unhashed = [k is None or (not k and not p.hashes_empty_key) for k in listed]
    return offsets, data, (np.array(unhashed, dtype=bool) if any(unhashed) else None)


# --- Public API -----------------------------------------------------------------


def murmur2(key: bytes) -> int:
    """Kafka's ``Utils.murmur2(key)``: the signed 32-bit value Java returns."""
    out = np.empty(1, dtype=np.int64)
    offsets, data, _ = _python_buffers([key])
    kernels.raw_hashes(kernels.MURMUR2, offsets, data, out)
    raw = int(out[0])
    return raw - 2**32 if raw >= 2**31 else raw


def placement_array(keys: Keys, partitioner: str = "murmur2") -> np.ndarray:
    """The non-negative value each key's partition is taken modulo of (int64), ``-1`` if unhashed.

    Hashing once and taking the modulo later lets one pass serve several
    candidate partition counts, which is what the analysis does on Spark.
    """
    p = get_partitioner(partitioner)
    offsets, data, mask = _key_buffers(keys, p)
    out = np.empty(len(offsets) - 1, dtype=np.int64)
    kernels.placements(p.hash_id, p.rule, offsets, data, out)
    if mask is not None:
        out[mask] = UNHASHED
    return out


def placement_values(keys: pa.Array, partitioner: str = "murmur2", suffix: int = 0) -> pa.Array:
    """Each Arrow key's placement (int64, null where unhashed): the one Arrow-side entry
    to the kernels, shared by Spark's UDF and a sample's read tasks.

    With ``suffix``, the key's last ``suffix`` bytes are not hashed (null when the key
    is shorter): a window or session store's changelog key sits where its source
    key's hash put it.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if suffix:
        long_enough = pc.greater_equal(pc.binary_length(keys), suffix)
        keys = pc.if_else(
            long_enough, pc.binary_slice(keys, 0, -suffix), pa.scalar(None, pa.binary())
        )
    values = placement_array(keys, partitioner)
    return pa.array(values, type=pa.int64(), mask=values < 0)


def partition_array(
    keys: Keys,
    num_partitions: int,
    partitioner: str = "murmur2",
) -> np.ndarray:
    """Each key's partition among ``num_partitions`` (int32), ``-1`` for unhashed keys.

    ``keys`` is a pyarrow binary or string array (or a list of bytes).  The work
    runs over the Arrow buffers in compiled code, with no Python per key.
    """
    n = check_partition_count(num_partitions)
    p = get_partitioner(partitioner)
    offsets, data, mask = _key_buffers(keys, p)
    out = np.empty(len(offsets) - 1, dtype=np.int32)
    kernels.partitions(p.hash_id, p.rule, offsets, data, n, out)
    if mask is not None:
        out[mask] = UNHASHED
    return out


def partition(key: bytes, num_partitions: int, partitioner: str = "murmur2") -> int:
    """The partition a producer using ``partitioner`` picks for ``key`` among ``num_partitions``.

    Raises :class:`UnhashedKeyError` for a key the partitioner does not hash
    (``None``, or ``b""`` under ``consistent_random``).
    """
    if key is None:
        raise UnhashedKeyError("a null key is placed by the sticky partitioner, not hashed")
    (result,) = partition_array([bytes(key)], num_partitions, partitioner)
    if result == UNHASHED:
        raise UnhashedKeyError(f"{partitioner} places an empty key without hashing it")
    return int(result)


def compile_kernels() -> int:
    """Every partitioner's loops compiled now, or loaded from the kernel cache
    (:mod:`migcheck.jit`), for each argument type the checks pass (Arrow keys and listed
    keys, placements and partitions, and the raw hashes of Arrow keys that the copy's
    check sums); the number of hashes.  ``migcheck warm`` calls it,
    so that no check compiles in front of its user."""
    import pyarrow as pa

    listed = [b"migcheck-warm-%d" % i for i in range(16)]
    for p in PARTITIONERS.values():
        kernels.compiled(p.hash_id)  # the compiled loops, not the interpreted ones
        for keys in (pa.array(listed, pa.binary()), listed):
            placement_array(keys, p.name)
            partition_array(keys, 7, p.name)
        offsets, data = arrow_buffers(pa.array(listed, pa.binary()))
        kernels.raw_hashes(p.hash_id, offsets, data, np.empty(len(listed), np.int64))
    murmur2(b"migcheck-warm")
    return len({p.hash_id for p in PARTITIONERS.values()})
