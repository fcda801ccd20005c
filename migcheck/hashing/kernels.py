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
unsigned CRC, the absolute value for FNV-1a) is the job of :func:`_placement`.

The functions below are written once, as plain Python over numpy scalars, and
run two ways: compiled by numba (the default, and the only way for large
inputs) or, for a handful of keys, interpreted as they stand.  Importing numba
and loading its cached machine code costs about a second, which one
``migcheck partition`` lookup never repays; the interpreted run is the same
source, so it cannot drift from the compiled one (the tests hold both to the
same oracles).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import numpy as np

#: Hash identifiers passed to the kernels (plain ints keep the compiled code simple).
MURMUR2 = 0
CRC32 = 1
FNV1A = 2

_M32 = np.uint64(0xFFFFFFFF)

# Java's Utils.murmur2 constants.
_MURMUR_SEED = np.uint64(0x9747B28C)
_MURMUR_M = np.uint64(0x5BD1E995)

# 32-bit FNV-1a (Fowler/Noll/Vo) offset basis and prime.
_FNV_OFFSET = np.uint64(0x811C9DC5)
_FNV_PRIME = np.uint64(0x01000193)


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

#: Up to this many keys, a call runs interpreted unless numba is already loaded.
INTERPRETED_MAX_KEYS = 64


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


def _raw_hash(kind: int, data: np.ndarray, start: int, end: int) -> np.uint64:
    if kind == MURMUR2:
        return _murmur2(data, start, end)
    if kind == CRC32:
        return _crc32(data, start, end)
    return _fnv1a(data, start, end)


def _placement(kind: int, raw: np.uint64) -> np.int64:
    """The non-negative value a client takes modulo the partition count.

    - murmur2: Java's ``Utils.toPositive`` (``& 0x7fffffff``), which librdkafka and
      kafka-python copy.
    - CRC-32: librdkafka's ``rd_crc32(...) % partition_cnt`` on the unsigned value.
    - FNV-1a: librdkafka takes the absolute value of the hash read as a signed
      int32 and returns it as uint32, so INT_MIN stays 2**31 and the unsigned
      modulo gives ``2**31 % n``; Sarama's default (abs after a signed modulo)
      gives the same partition for every hash.
    """
    if kind == MURMUR2:
        return np.int64(raw & np.uint64(0x7FFFFFFF))
    if kind == CRC32:
        return np.int64(raw)
    if raw >= np.uint64(0x80000000):
        return np.int64(np.uint64(0x100000000) - raw)
    return np.int64(raw)


def _raw_hashes(kind: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the raw unsigned hash of key ``i`` (keys delimited by ``offsets``)."""
    for i in range(out.shape[0]):
        out[i] = np.int64(_raw_hash(kind, data, offsets[i], offsets[i + 1]))


def _placements(kind: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the placement value of key ``i`` (see :func:`_placement`)."""
    for i in range(out.shape[0]):
        out[i] = _placement(kind, _raw_hash(kind, data, offsets[i], offsets[i + 1]))


def _partitions(
    kind: int, offsets: np.ndarray, data: np.ndarray, num_partitions: int, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with key ``i``'s partition among ``num_partitions``, in one pass."""
    # Unsigned 32-bit on both sides (every placement and count fits): no sign fix-up, and
    # the compiler divides in 32 bits, several times faster than a 64-bit division.
    n = np.uint32(num_partitions)
    for i in range(out.shape[0]):
        value = np.uint32(_placement(kind, _raw_hash(kind, data, offsets[i], offsets[i + 1])))
        out[i] = value % n


# --- running them: compiled, or interpreted for a few keys -----------------------------

_PER_KEY = ("_murmur2", "_crc32", "_fnv1a", "_raw_hash", "_placement")
_LOOPS = ("_raw_hashes", "_placements", "_partitions")


@functools.cache
def _compiled() -> dict[str, Callable[..., None]]:
    """The loops compiled by numba (cached on disk beside this module).

    Each function is compiled from a copy that shares one namespace with the
    compiled per-key hashes, so numba resolves the calls between them, while the
    module's own functions stay plain Python for the interpreted path.
    """
    import numba

    # error_model="numpy" drops Python's zero-divisor checks from the modulo; every
    # divisor here is a validated partition count.
    options = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
    namespace = dict(globals())

    def copy(name: str) -> types.FunctionType:
        fn = globals()[name]
        clone = types.FunctionType(fn.__code__, namespace, name, fn.__defaults__)
        clone.__module__ = __name__
        return clone

    for name in _PER_KEY:  # inlined into the loops: measured 40% faster than calls
        namespace[name] = numba.njit(inline="always", **options)(copy(name))
    for name in _LOOPS:
        namespace[name] = numba.njit(**options)(copy(name))
    return {name: namespace[name] for name in _LOOPS}


def _run(name: str, out: np.ndarray) -> Callable[..., None]:
    if out.shape[0] <= INTERPRETED_MAX_KEYS and _compiled.cache_info().currsize == 0:
        return globals()[name]
    return _compiled()[name]


def raw_hashes(kind: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the raw unsigned hash of key ``i`` (keys delimited by ``offsets``)."""
    _run("_raw_hashes", out)(kind, offsets, data, out)


def placements(kind: int, offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the placement value of key ``i`` (see :func:`_placement`)."""
    _run("_placements", out)(kind, offsets, data, out)


def partitions(
    kind: int, offsets: np.ndarray, data: np.ndarray, num_partitions: int, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with key ``i``'s partition among ``num_partitions``, in one pass."""
    _run("_partitions", out)(kind, offsets, data, num_partitions, out)


def compiled() -> None:
    """Load the compiled kernels now (a benchmark warms up; a worker pays it once)."""
    _compiled()
