"""The hash kernels: the one implementation of each partitioner hash.

Every path in migcheck (the scalar API, the vectorized API and the Spark UDF)
ends up here, so a key can never be hashed two different ways.  The kernels
walk the two buffers of an Arrow binary array (the offsets and the bytes)
in compiled code: no Python runs per key.

Integer arithmetic is done in unsigned 64-bit and masked back to 32 bits after
every multiply.  That reproduces Java's wrapping ``int`` and C's ``uint32_t``
exactly, without relying on how numba types small-integer overflow.

Each hash returns the *raw* 32-bit value as an unsigned number (0 .. 2**32-1).
How a client turns that into a partition (Java's ``toPositive``, librdkafka's
unsigned CRC, the absolute value for FNV-1a) is a *placement rule*, the job of
:func:`_placement`.  A partitioner is one hash and one rule: clients pair the same
hash with different rules (Sarama's FNV-1a three ways), so the two are separate
arguments of every loop.

The functions below are written once, as plain Python over numpy scalars, and
run two ways: compiled by numba (the default, and the only way for large
inputs) or, for a handful of keys, interpreted as they stand.  Importing numba
and loading its cached machine code costs more than one ``migcheck partition``
lookup would ever repay (docs/benchmarks.md); the interpreted run is the same
source, so it cannot drift from the compiled one (the tests hold both to the same
oracles).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import numpy as np

#: Hash identifiers passed to the kernels (plain ints keep the compiled code simple).
MURMUR2 = 0
CRC32 = 1
FNV1A = 2
#: murmur2 as KafkaJS v1 wrote it (``Partitioners.LegacyPartitioner``), see
#: :func:`_murmur2_kafkajs`.
MURMUR2_KAFKAJS = 3
XXHASH32 = 4

#: Placement rules: how a client makes the raw hash a non-negative number (see
#: :func:`_placement`).
TO_POSITIVE = 0  # hash & 0x7fffffff: Java's Utils.toPositive
UNSIGNED = 1  # the hash read as uint32
ABS = 2  # |hash read as int32|, INT_MIN as 2**31 (abs before or after a signed modulo)

_M32 = np.uint64(0xFFFFFFFF)

# Java's Utils.murmur2 constants.
_MURMUR_SEED = np.uint64(0x9747B28C)
_MURMUR_M = np.uint64(0x5BD1E995)

# The same constant as an IEEE double, for KafkaJS's legacy murmur2.
_MURMUR_M_DOUBLE = np.float64(0x5BD1E995)

# 32-bit FNV-1a (Fowler/Noll/Vo) offset basis and prime.
_FNV_OFFSET = np.uint64(0x811C9DC5)
_FNV_PRIME = np.uint64(0x01000193)


# XXH32's primes (Yann Collet's xxHash specification); the seed is 0 everywhere we use it.
_XXH_P1 = np.uint64(2654435761)
_XXH_P2 = np.uint64(2246822519)
_XXH_P3 = np.uint64(3266489917)
_XXH_P4 = np.uint64(668265263)
_XXH_P5 = np.uint64(374761393)


def _crc32_table() -> np.ndarray:
    """The reflected CRC-32 table (polynomial 0xEDB88320), as zlib and librdkafka use."""
    table = np.zeros(256, dtype=np.uint64)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (0xEDB88320 ^ (c >> 1)) if c & 1 else (c >> 1)
        table[n] = c
    return table


_CRC_TABLE = _crc32_table()

#: Up to this many keys in all, a process hashes interpreted until numba is loaded: a
#: key costs tens of microseconds so, and importing numba and loading its compiled loops
#: (or compiling them, on a first run) costs more than a small topic's keys ever would
#: (docs/benchmarks.md).  Past it, the compiled loops.
INTERPRETED_MAX_KEYS = 4_000
_interpreted_keys = 0


def _murmur2(data: np.ndarray, start: int, end: int) -> np.uint64:
    """Kafka's murmur2 (``Utils.murmur2``) over ``data[start:end]``, as unsigned 32 bits."""
    m = _MURMUR_M
    length = np.uint64(end - start)
    h = (_MURMUR_SEED ^ length) & _M32
    i = start
    blocks_end = start + ((end - start) & ~3)
    while i < blocks_end:
        k = (
            np.uint64(data[i])
            | (np.uint64(data[i + 1]) << np.uint64(8))
            | (np.uint64(data[i + 2]) << np.uint64(16))
            | (np.uint64(data[i + 3]) << np.uint64(24))
        )
        k = (k * m) & _M32
        k ^= k >> np.uint64(24)
        k = (k * m) & _M32
        h = (h * m) & _M32
        h ^= k
        i += 4
    rem = end - blocks_end
    if rem == 3:
        h ^= np.uint64(data[blocks_end + 2]) << np.uint64(16)
    if rem >= 2:
        h ^= np.uint64(data[blocks_end + 1]) << np.uint64(8)
    if rem >= 1:
        h ^= np.uint64(data[blocks_end])
        h = (h * m) & _M32
    h ^= h >> np.uint64(13)
    h = (h * m) & _M32
    h ^= h >> np.uint64(15)
    return h


def _crc32(data: np.ndarray, start: int, end: int) -> np.uint64:
    """Standard CRC-32 (zlib's ``crc32``) over ``data[start:end]``, unsigned."""
    c = _M32
    for i in range(start, end):
        c = _CRC_TABLE[(c ^ np.uint64(data[i])) & np.uint64(0xFF)] ^ (c >> np.uint64(8))
    return c ^ _M32


def _fnv1a(data: np.ndarray, start: int, end: int) -> np.uint64:
    """32-bit FNV-1a over ``data[start:end]``, unsigned."""
    h = _FNV_OFFSET
    for i in range(start, end):
        h ^= np.uint64(data[i])
        h = (h * _FNV_PRIME) & _M32
    return h


def _js_times_m(x: np.uint64) -> np.uint64:
    """``x * M`` as JavaScript computes it, read back as 32 bits.

    KafkaJS's legacy murmur2 multiplies int32 values by M in IEEE doubles: a product
    above 2**53 loses its low bits to rounding (to nearest, ties to even), and the next
    ``^`` or ``>>>`` truncates the rounded product to 32 bits (ToInt32/ToUint32, the
    same bits).  Both factors are exact doubles and the product stays below 2**62, so
    the double multiply here rounds exactly as V8's does and converts back exactly.
    """
    signed = np.int64(x) - np.int64(0x100000000) if x >= np.uint64(0x80000000) else np.int64(x)
    product = np.int64(np.float64(signed) * _MURMUR_M_DOUBLE)
    return np.uint64(product & np.int64(0xFFFFFFFF))


def _murmur2_kafkajs(data: np.ndarray, start: int, end: int) -> np.uint64:
    """murmur2 as KafkaJS v1 wrote it (``src/producer/partitioners/legacy/murmur2.js``).

    It differs from Java's in two ways that change the hash: its block loop runs
    ``ceil(length / 4)`` times (``i < length / 4`` on a fraction), so a key whose
    length is not a multiple of 4 has its tail mixed once as a zero-padded block and
    then again by the tail switch; and every multiply is a double (see
    :func:`_js_times_m`).  The result is the returned int32's bits, unsigned.
    """
    length = end - start
    h = (_MURMUR_SEED ^ np.uint64(length)) & _M32
    i = start
    while i < end:  # ceil(length / 4) blocks; bytes past the end read as 0
        k = np.uint64(0)
        for j in range(4):
            if i + j < end:
                k |= np.uint64(data[i + j]) << np.uint64(8 * j)
        k = _js_times_m(k)
        k ^= k >> np.uint64(24)
        k = _js_times_m(k)
        h = _js_times_m(h)
        h ^= k
        i += 4
    rem = length % 4
    tail = end - rem
    if rem == 3:
        h ^= np.uint64(data[tail + 2]) << np.uint64(16)
    if rem >= 2:
        h ^= np.uint64(data[tail + 1]) << np.uint64(8)
    if rem >= 1:
        h ^= np.uint64(data[tail])
        h = _js_times_m(h)
    h ^= h >> np.uint64(13)
    h = _js_times_m(h)
    h ^= h >> np.uint64(15)
    return h


def _rotl32(x: np.uint64, r: int) -> np.uint64:
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


def _le32(data: np.ndarray, i: int) -> np.uint64:
    return (
        np.uint64(data[i])
        | (np.uint64(data[i + 1]) << np.uint64(8))
        | (np.uint64(data[i + 2]) << np.uint64(16))
        | (np.uint64(data[i + 3]) << np.uint64(24))
    )


def _xxh32_round(acc: np.uint64, lane: np.uint64) -> np.uint64:
    acc = (acc + lane * _XXH_P2) & _M32
    return (_rotl32(acc, 13) * _XXH_P1) & _M32


def _xxhash32(data: np.ndarray, start: int, end: int) -> np.uint64:
    """XXH32 with seed 0 over ``data[start:end]`` (the xxHash specification), unsigned."""
    length = end - start
    i = start
    if length >= 16:
        v1 = (_XXH_P1 + _XXH_P2) & _M32
        v2 = _XXH_P2
        v3 = np.uint64(0)
        v4 = (np.uint64(0x100000000) - _XXH_P1) & _M32  # seed - P1, wrapped
        stripes_end = start + (length & ~15)
        while i < stripes_end:
            v1 = _xxh32_round(v1, _le32(data, i))
            v2 = _xxh32_round(v2, _le32(data, i + 4))
            v3 = _xxh32_round(v3, _le32(data, i + 8))
            v4 = _xxh32_round(v4, _le32(data, i + 12))
            i += 16
        h = (_rotl32(v1, 1) + _rotl32(v2, 7) + _rotl32(v3, 12) + _rotl32(v4, 18)) & _M32
    else:
        h = _XXH_P5
    h = (h + np.uint64(length)) & _M32
    while i + 4 <= end:
        h = (h + _le32(data, i) * _XXH_P3) & _M32
        h = (_rotl32(h, 17) * _XXH_P4) & _M32
        i += 4
    while i < end:
        h = (h + np.uint64(data[i]) * _XXH_P5) & _M32
        h = (_rotl32(h, 11) * _XXH_P1) & _M32
        i += 1
    h ^= h >> np.uint64(15)
    h = (h * _XXH_P2) & _M32
    h ^= h >> np.uint64(13)
    h = (h * _XXH_P3) & _M32
    h ^= h >> np.uint64(16)
    return h


def _raw_hash(hash_id: int, data: np.ndarray, start: int, end: int) -> np.uint64:
    """The raw hash of ``data[start:end]`` under ``hash_id`` (one of the ids above)."""
    if hash_id == MURMUR2:
        return _murmur2(data, start, end)
    if hash_id == CRC32:
        return _crc32(data, start, end)
    if hash_id == MURMUR2_KAFKAJS:
        return _murmur2_kafkajs(data, start, end)
    if hash_id == XXHASH32:
        return _xxhash32(data, start, end)
    if hash_id == FNV1A:
        return _fnv1a(data, start, end)
    # A partitioner whose hash has no branch above must not hash as another one.
    raise ValueError("unknown hash id")


def _placement(rule: int, raw: np.uint64) -> np.int64:
    """The non-negative value a client takes modulo the partition count.

    - ``TO_POSITIVE``: Java's ``Utils.toPositive`` (``& 0x7fffffff``), which librdkafka's
      murmur2, kafka-python, KafkaJS, Sarama's reference partitioner and kafka-go's
      ``ReferenceHash`` copy.
    - ``UNSIGNED``: the hash as uint32: librdkafka's ``rd_crc32(...) % partition_cnt``,
      franz-go's ``SaramaHasher`` on 64-bit (``int(uint32) % n``), kafka-rust's
      ``hash as u32 % n``.
    - ``ABS``: librdkafka's FNV-1a takes the absolute value of the hash read as a
      signed int32 and returns it as uint32, so INT_MIN stays 2**31 and the unsigned
      modulo gives ``2**31 % n``; Sarama's hash partitioner (abs after a signed
      modulo) gives the same partition for every hash.
    """
    if rule == TO_POSITIVE:
        return np.int64(raw & np.uint64(0x7FFFFFFF))
    if rule == UNSIGNED:
        return np.int64(raw)
    if raw >= np.uint64(0x80000000):
        return np.int64(np.uint64(0x100000000) - raw)
    return np.int64(raw)


def _raw_hashes(hash_id: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the raw unsigned hash of key ``i`` (keys delimited by ``offsets``)."""
    for i in range(out.shape[0]):
        out[i] = np.int64(_raw_hash(hash_id, data, offsets[i], offsets[i + 1]))


def _placements(
    hash_id: int, rule: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with the placement value of key ``i`` (see :func:`_placement`)."""
    for i in range(out.shape[0]):
        out[i] = _placement(rule, _raw_hash(hash_id, data, offsets[i], offsets[i + 1]))


def _partitions(
    hash_id: int,
    rule: int,
    offsets: np.ndarray,
    data: np.ndarray,
    num_partitions: int,
    out: np.ndarray,
) -> None:
    """Fill ``out[i]`` with key ``i``'s partition among ``num_partitions``, in one pass."""
    # Unsigned 32-bit on both sides (every placement and count fits): no sign fix-up, and
    # the compiler divides in 32 bits, several times faster than a 64-bit division.
    n = np.uint32(num_partitions)
    for i in range(out.shape[0]):
        value = np.uint32(_placement(rule, _raw_hash(hash_id, data, offsets[i], offsets[i + 1])))
        out[i] = value % n


# --- running them: compiled, or interpreted for a few keys -----------------------------

_PER_KEY = (
    "_murmur2",
    "_crc32",
    "_fnv1a",
    "_js_times_m",
    "_murmur2_kafkajs",
    "_rotl32",
    "_le32",
    "_xxh32_round",
    "_xxhash32",
    "_placement",
)
_LOOPS = ("_raw_hashes", "_placements", "_partitions")
#: The hash function of each id, and the name its compiled loops' cache files carry.
_HASHES = {
    MURMUR2: ("_murmur2", "murmur2"),
    CRC32: ("_crc32", "crc32"),
    FNV1A: ("_fnv1a", "fnv1a"),
    MURMUR2_KAFKAJS: ("_murmur2_kafkajs", "murmur2_kafkajs"),
    XXHASH32: ("_xxhash32", "xxhash32"),
}


def _one_hash(hash_id: int, data: np.ndarray, start: int, end: int) -> np.uint64:
    """``_raw_hash`` in a loop compiled for one hash: ``_HASH`` is that hash, bound in
    the loop's namespace by :func:`_compiled` (never called interpreted)."""
    return _HASH(data, start, end)  # type: ignore[name-defined]  # noqa: F821


@functools.cache
def _compiled(hash_id: int) -> dict[str, Callable[..., None]]:
    """The loops compiled by numba for one hash (cached per host, :mod:`migcheck.jit`).

    Each loop is compiled for the one hash it runs, not for all five behind a branch:
    numba then compiles a fifth of the code, and a run (or a fresh executor) that
    hashes with murmur2 alone pays a fifth of the compile (docs/benchmarks.md).  Each
    function is compiled from a copy that shares one namespace with the compiled
    per-key hashes, so numba resolves the calls between them, while the module's own
    functions stay plain Python for the interpreted path.
    """
    if hash_id not in _HASHES:
        # A partitioner whose hash has no loop must not hash as another one.
        raise ValueError("unknown hash id")
    import numba

    from migcheck import jit

    # error_model="numpy" drops Python's zero-divisor checks from the modulo; every
    # divisor here is a validated partition count.
    options: dict[str, Any] = {"nogil": True, "boundscheck": False, "error_model": "numpy"}
    namespace = dict(globals())
    hash_name, suffix = _HASHES[hash_id]

    def copy(name: str, qualname: str | None = None) -> types.FunctionType:
        fn = globals()[name]
        clone = types.FunctionType(fn.__code__, namespace, name, fn.__defaults__)
        clone.__module__ = __name__
        clone.__qualname__ = qualname or name
        return clone

    for name in _PER_KEY:  # inlined into the loops: faster than calls (docs/benchmarks.md)
        namespace[name] = numba.njit(inline="always", **options)(copy(name))
    namespace["_HASH"] = namespace[hash_name]
    namespace["_raw_hash"] = numba.njit(inline="always", **options)(copy("_one_hash"))
    # numba names a function's cache files by its qualified name: one per hash.
    return {name: jit.njit(copy(name, f"{name}__{suffix}"), **options) for name in _LOOPS}


def _run(name: str, hash_id: int, out: np.ndarray) -> Callable[..., None]:
    """The loop ``name`` for ``hash_id``: interpreted while this process's keys so far fit
    :data:`INTERPRETED_MAX_KEYS` and nothing is compiled yet, else compiled."""
    global _interpreted_keys
    keys = _interpreted_keys + out.shape[0]
    if keys <= INTERPRETED_MAX_KEYS and _compiled.cache_info().currsize == 0:
        _interpreted_keys = keys
        return globals()[name]
    return _compiled(hash_id)[name]


def raw_hashes(hash_id: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the raw unsigned hash of key ``i`` (keys delimited by ``offsets``)."""
    _run("_raw_hashes", hash_id, out)(hash_id, offsets, data, out)


def placements(
    hash_id: int, rule: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with the placement value of key ``i`` under ``rule`` (see
    :func:`_placement`)."""
    _run("_placements", hash_id, out)(hash_id, rule, offsets, data, out)


def partitions(
    hash_id: int,
    rule: int,
    offsets: np.ndarray,
    data: np.ndarray,
    num_partitions: int,
    out: np.ndarray,
) -> None:
    """Fill ``out[i]`` with key ``i``'s partition among ``num_partitions``, in one pass."""
    _run("_partitions", hash_id, out)(hash_id, rule, offsets, data, num_partitions, out)


def compiled(hash_id: int = MURMUR2) -> None:
    """Load ``hash_id``'s compiled kernels now (a benchmark warms up; a worker pays it
    once)."""
    _compiled(hash_id)
