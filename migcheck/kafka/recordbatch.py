"""Fetched bytes to record columns: Kafka's record batches (format v2) decoded in compiled code.

Why: kafka-python builds a Python object per record only for migcheck to keep a key and
two sizes of each.  :func:`decode` makes one fetched partition's bytes one
:class:`Columns` chunk instead; kafka-python's fetcher calls it through hook 4 of
:mod:`migcheck.kafka.private_hooks`, which says why and what it measured.  Where that hook
is fenced off, :func:`columns_of_records` gathers kafka-python's own records into the
same columns.

The rules are Kafka's consumer's.  Batch headers are read in Python, one per
batch: the CRC-32C, the compression codec, control batches (transaction markers,
never returned) and, for ``read_committed``, batches of aborted transactions (the
fetch response lists where each began; an abort marker ends it).  Records are read
by one numba loop per batch that writes columns and skips values and headers
without reading them.  A record's key is copied; its value is only measured.
"""

from __future__ import annotations

import functools
import struct
import types
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from migcheck.errors import ReadError

if TYPE_CHECKING:
    import pyarrow as pa
    from kafka.consumer.fetcher import ConsumerRecord

#: A v2 batch header: base offset, length, leader epoch, magic, CRC, attributes,
#: last offset delta, first and max timestamps, producer id and epoch, base
#: sequence, record count.  ``length`` counts the bytes after itself.
_HEADER = struct.Struct(">qiibIhiqqqhii")
_AFTER_LENGTH = 12  # base offset and length come before what ``length`` counts
_CRC_FROM = 21  # the CRC covers the batch from its attributes on

_CODEC_MASK = 0x07
_LOG_APPEND_TIME = 0x08
_TRANSACTIONAL = 0x10
_CONTROL = 0x20


# --- the compiled record loop ------------------------------------------------------


def _varint(src: np.ndarray, pos: int | np.int64) -> tuple[int | np.int64, int | np.int64]:
    """A zigzag varint (Kafka's record fields) at ``pos``: its value and the next position."""
    raw: int | np.int64 = 0  # an np.int64 once a byte is read (numba's int64 compiled)
    shift = 0
    while True:
        b = np.int64(src[pos])
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return (raw >> 1) ^ -(raw & 1), pos


def _fnv1a_64(src: np.ndarray, start: int | np.int64, end: int | np.int64) -> np.uint64:
    """FNV-1a, 64 bits, of ``src[start:end]``: a record's value and headers as one number."""
    h = np.uint64(0xCBF29CE484222325)
    for j in range(start, end):
        h = (h ^ np.uint64(src[j])) * np.uint64(0x100000001B3)
    return h


def _records(
    src: np.ndarray,
    count: int,
    base_offset: int,
    base_ts: int,
    append_ts: int,
    first: int,
    end: int,
    out: tuple[np.ndarray, ...],
    i: int,
    d: int | np.int64,
    b: int | np.int64,
    digest: bool,
    bodies: bool,
) -> tuple[int, int | np.int64, int | np.int64, int]:
    """Decode up to ``count`` records of one batch into ``out`` from row ``i``, key byte
    ``d`` and body byte ``b``, keeping offsets in ``[first, end)``; returns the new
    ``(i, d, b)`` and a status: 0 the batch is done, 1 ``end`` was reached, -1 the bytes
    do not hold ``count`` records.

    ``append_ts`` >= 0 is the batch's LogAppendTime, which every record then carries.
    With ``digest``, each record's value and headers, as their bytes from the value's
    length on (a null value, an empty one and the headers' boundaries all differ there),
    become its digest (:func:`_fnv1a_64`).  With ``bodies`` (a copy, which writes whole
    records), each record's value bytes and its headers as encoded are copied too.
    """
    offsets, stamps, key_ends, key_null, value_sizes, key_data, digests, body_ends, body_data = out
    pos: int | np.int64 = 0
    size = src.shape[0]
    for _ in range(count):
        if pos >= size:
            return i, d, b, -1
        length, pos = _varint(src, pos)
        record_end = pos + length
        if length < 0 or record_end > size:
            return i, d, b, -1
        pos += 1  # attributes: unused in format v2
        ts_delta, pos = _varint(src, pos)
        offset_delta, pos = _varint(src, pos)
        key_len, pos = _varint(src, pos)
        key_at = pos
        if key_len > 0:
            pos += key_len
        if pos >= record_end:
            return i, d, b, -1
        value_at = pos
        value_len, pos = _varint(src, pos)
        if pos > record_end or (value_len > 0 and pos + value_len > record_end):
            return i, d, b, -1
        offset = base_offset + offset_delta
        if offset >= end:
            return i, d, b, 1
        if offset >= first:
            offsets[i] = offset
            stamps[i] = append_ts if append_ts >= 0 else base_ts + ts_delta
            key_null[i] = key_len < 0
            for j in range(max(key_len, 0)):
                key_data[d + j] = src[key_at + j]
            d += max(key_len, 0)
            key_ends[i] = d
            value_sizes[i] = value_len  # -1: a null value (tombstone)
            if digest:
                digests[i] = _fnv1a_64(src, value_at, record_end)
            if bodies:  # the value's bytes, then the headers as encoded
                for j in range(record_end - pos):
                    body_data[b + j] = src[pos + j]
                b += record_end - pos
                body_ends[i] = b
            i += 1
        pos = record_end  # headers are read only for a digest or a body
    return i, d, b, 0


@functools.cache
def _compiled() -> Callable[..., tuple[int, int | np.int64, int | np.int64, int]]:
    """The record loop compiled by numba (cached per host, :mod:`migcheck.jit`)."""
    import numba

    from migcheck import jit

    options: dict[str, Any] = {"nogil": True, "boundscheck": False}
    varint = numba.njit(inline="always", **options)(_varint)
    fnv = numba.njit(inline="always", **options)(_fnv1a_64)
    namespace = {**globals(), "_varint": varint, "_fnv1a_64": fnv}
    loop = types.FunctionType(_records.__code__, namespace, "_records", _records.__defaults__)
    loop.__module__ = __name__
    return jit.njit(loop, **options)


#: Up to this many records in all, a process decodes them with the loop interpreted (tens
#: of microseconds a record) until numba is loaded: a small topic's read then never
#: imports numba nor compiles (docs/benchmarks.md).  Past it, the compiled loop.
INTERPRETED_MAX_RECORDS = 5_000
_interpreted_records = 0


def _loop(
    count: int, whole: bool = False
) -> Callable[..., tuple[int, int | np.int64, int | np.int64, int]]:
    """The record loop for a batch of ``count`` records: interpreted while this process's
    records so far fit :data:`INTERPRETED_MAX_RECORDS` and it is not compiled yet, unless
    each record's value is read (``whole``: a digest or a body, a loop over every byte,
    interpreted 4% of a 5 M-record copy for its first 5,000 records a worker)."""
    global _interpreted_records
    records = _interpreted_records + count
    if not whole and records <= INTERPRETED_MAX_RECORDS and _compiled.cache_info().currsize == 0:
        _interpreted_records = records
        return _records
    return _compiled()


def warm() -> None:
    """Load the compiled record loop from numba's disk cache now, with the argument types
    :func:`decode` passes (a read-only byte array, as a fetch's bytes are): a read
    task's worker may do it before its first fetch (``analysis.spark.warm_workers``)."""
    out = _Builder(0, 0)
    _compiled()(np.frombuffer(b"", np.uint8), 0, 0, 0, -1, 0, 1, out.cols, 0, 0, 0, False, False)


# --- columns -----------------------------------------------------------------------


@dataclass
class Columns:
    """Decoded records of one partition, column by column (numpy arrays of ``n`` rows).

    ``key_ends[i]`` is where key ``i`` ends in ``key_data`` (the previous end is where it
    starts, 0 for the first); ``value_sizes`` is -1 for a null value.  ``digests``, when
    asked for, holds each record's value and headers as one number (:func:`_fnv1a_64`).
    ``body_ends``, when asked for, is where record ``i``'s body ends in ``body_data``: its
    value's bytes, then its headers as the batch encodes them (:func:`whole_records`).
    """

    offsets: np.ndarray
    timestamps: np.ndarray
    key_ends: np.ndarray
    key_null: np.ndarray
    value_sizes: np.ndarray
    key_data: np.ndarray
    digests: np.ndarray | None = None
    body_ends: np.ndarray | None = None
    body_data: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.offsets.shape[0])

    def where(self, mask: np.ndarray) -> Columns:
        """The records ``mask`` selects, their keys' and bodies' bytes with them."""
        key_ends, key_data = _selected(self.key_ends, self.key_data, mask)
        bodies: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
        if self.body_ends is not None and self.body_data is not None:
            bodies = _selected(self.body_ends, self.body_data, mask)
        digests = None if self.digests is None else self.digests[mask]
        return Columns(self.offsets[mask], self.timestamps[mask], key_ends, self.key_null[mask],
                       self.value_sizes[mask], key_data, digests, *bodies)  # fmt: skip


def _selected(
    ends: np.ndarray, data: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ``mask``ed rows of a variable-length column (each row ends at ``ends[i]`` in
    ``data``): their new ends, and their bytes one after another."""
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)[mask]
    lengths = ends.astype(np.int64)[mask] - starts
    new_ends = np.cumsum(lengths)
    moved = np.repeat(starts - (new_ends - lengths), lengths)
    return new_ends.astype(ends.dtype), data[moved + np.arange(moved.size)]


def in_sorted(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is among ``sorted_values`` (ascending): a binary search,
    not a hash set, over offsets that are sorted already."""
    at = np.searchsorted(sorted_values, values)
    found = np.zeros(values.shape, np.bool_)
    inside = at < sorted_values.size
    found[inside] = sorted_values[at[inside]] == values[inside]
    return found


class _Builder:
    """Grows the column arrays as batches are decoded into them."""

    def __init__(
        self, rows: int, key_bytes: int, digest: bool = False, bodies: bool = False
    ) -> None:
        self.i = 0
        self.d: int | np.int64 = 0  # an np.int64 from the interpreted record loop
        self.b: int | np.int64 = 0
        self.digest, self.bodies = digest, bodies
        key_bytes = max(key_bytes, 256)
        self.cols = self._alloc(max(rows, 16), key_bytes, 4 * key_bytes if bodies else 0)

    #: The columns with a row per record (all but ``key_data`` and ``body_data``).
    _ROWS = (0, 1, 2, 3, 4, 6, 7)

    @staticmethod
    def _alloc(rows: int, key_bytes: int, body_bytes: int) -> tuple[np.ndarray, ...]:
        return (
            np.empty(rows, np.int64),
            np.empty(rows, np.int64),
            np.empty(rows, np.int32),
            np.empty(rows, np.bool_),
            np.empty(rows, np.int32),
            np.empty(key_bytes, np.uint8),
            np.empty(rows, np.uint64),
            np.empty(rows, np.int64),
            np.empty(body_bytes, np.uint8),
        )

    def reserve(self, rows: int, batch_bytes: int) -> None:
        """Room for ``rows`` more records whose keys (and bodies) fit ``batch_bytes``."""
        c = self.cols
        body = batch_bytes if self.bodies else 0
        if (self.i + rows <= c[0].shape[0] and self.d + batch_bytes <= c[5].shape[0]
                and self.b + body <= c[8].shape[0]):  # fmt: skip
            return
        bigger = self._alloc(
            max(2 * c[0].shape[0], self.i + rows),
            max(2 * c[5].shape[0], self.d + batch_bytes),
            max(2 * c[8].shape[0], self.b + body) if self.bodies else 0,
        )
        for k in self._ROWS:
            bigger[k][: self.i] = c[k][: self.i]
        bigger[5][: self.d] = c[5][: self.d]
        bigger[8][: self.b] = c[8][: self.b]
        self.cols = bigger

    def columns(self) -> Columns:
        c, i = self.cols, self.i
        return Columns(c[0][:i], c[1][:i], c[2][:i], c[3][:i], c[4][:i], c[5][: self.d],
                       c[6][:i] if self.digest else None,
                       c[7][:i] if self.bodies else None,
                       c[8][: self.b] if self.bodies else None)  # fmt: skip


class WholeRecord(NamedTuple):
    """A record as a copy writes it: kafka-python's ``ConsumerRecord`` names, no more."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


#: A record's fields in the order librdkafka's ``produce`` takes them: value, key,
#: timestamp, and its headers (None for none).
Fields = tuple[bytes | None, bytes | None, int, list[tuple[str, bytes | None]] | None]


def whole_records(c: Columns) -> list[WholeRecord]:
    """The records of columns decoded with ``bodies``, each with its key, value and
    headers as bytes: for a copy's rarer paths, which need an object per record."""
    rows = zip(c.offsets.tolist(), record_fields(c), strict=True)
    return [
        WholeRecord(offset, ts, key, value, headers or [])
        for offset, (value, key, ts, headers) in rows
    ]


def record_fields(c: Columns) -> Iterator[Fields]:
    """Each record of columns decoded with ``bodies``, as the fields a copy writes, one
    at a time: a copy's write takes them straight from the columns' bytes, for a
    ``WholeRecord`` kept per record of a chunk cost a 5 M-record copy more than the
    writes (docs/benchmarks.md)."""
    if c.body_ends is None or c.body_data is None:
        raise ValueError("columns decoded without bodies")
    keys, bodies = c.key_data.tobytes(), c.body_data.tobytes()
    k = b = 0
    rows = zip(c.timestamps.tolist(), c.key_null.tolist(), c.value_sizes.tolist(),
               c.key_ends.tolist(), c.body_ends.tolist(), strict=True)  # fmt: skip
    for ts, null, size, key_end, body_end in rows:
        value_end = b + size if size > 0 else b
        # a header count of 0 is one byte: no headers (the most records)
        headers = None if body_end - value_end == 1 else _headers(bodies[value_end:body_end])
        yield (
            None if size < 0 else bodies[b:value_end],
            None if null else keys[k:key_end],
            ts,
            headers,
        )
        k, b = key_end, body_end


def _headers(encoded: bytes) -> list[tuple[str, bytes | None]]:
    """A record's headers from their encoding in a batch: a count, then each header's
    key (length, UTF-8) and value (length, -1 for null), lengths as zigzag varints."""
    from kafka.record.util import decode_varint

    count, pos = decode_varint(encoded, 0)
    out = []
    for _ in range(count):
        size, pos = decode_varint(encoded, pos)
        key = encoded[pos : pos + size].decode("utf-8")
        size, pos = decode_varint(encoded, pos + size)
        out.append((key, None if size < 0 else encoded[pos : pos + size]))
        pos += max(size, 0)
    return out


def key_array(c: Columns) -> pa.Array:
    """The records' keys as an Arrow binary array (null for a null key), over the
    columns' own buffers: no Python object per key."""
    import pyarrow as pa

    n = c.n
    key_offsets = np.zeros(n + 1, np.int32)
    key_offsets[1:] = c.key_ends
    valid = np.packbits(~c.key_null, bitorder="little")
    return pa.Array.from_buffers(
        pa.binary(), n, [pa.py_buffer(valid), pa.py_buffer(key_offsets), pa.py_buffer(c.key_data)]
    )


@dataclass
class WholeChunk:
    """A range's records whole, as a copy writes them: ``columns`` decoded with bodies,
    or, where the hooks are fenced off, kafka-python's own records (``given``).  The
    write takes :meth:`fields` straight from the columns; only a copy's rarer paths (a
    retry's look at the destination, kafka-python's producer) need :attr:`records`."""

    columns: list[Columns]
    given: list[ConsumerRecord] | None = None

    def __len__(self) -> int:
        return len(self.given) if self.given is not None else sum(c.n for c in self.columns)

    @functools.cached_property
    def records(self) -> Sequence[WholeRecord | ConsumerRecord]:
        """An object per record, with kafka-python's names."""
        if self.given is not None:
            return self.given
        return [r for c in self.columns for r in whole_records(c)]

    def fields(self) -> Iterator[Fields]:
        if self.given is None:
            return (f for c in self.columns for f in record_fields(c))
        return ((r.value, r.key, r.timestamp, list(r.headers) or None) for r in self.given)

    def keys(self) -> pa.Array:
        """The keys as an Arrow binary array, as the partitioners take them: over the
        columns' own buffers."""
        import pyarrow as pa

        if self.given is not None:
            return pa.array([r.key for r in self.given], pa.binary())
        return pa.concat_arrays([key_array(c) for c in self.columns] or [pa.array([], pa.binary())])

    def only(self, offsets: np.ndarray) -> WholeChunk:
        """The records at ``offsets`` (ascending), in their order."""
        if self.given is None:
            return WholeChunk([c.where(in_sorted(c.offsets, offsets)) for c in self.columns])
        at = np.array([r.offset for r in self.given], np.int64)
        kept = in_sorted(at, offsets).tolist()
        return WholeChunk([], [r for r, keep in zip(self.given, kept, strict=True) if keep])

    def timestamps(self) -> list[int]:
        if self.given is not None:
            return [r.timestamp for r in self.given]
        return [t for c in self.columns for t in c.timestamps.tolist()]

    def size(self) -> int:
        """The bytes of the keys and values."""
        if self.given is not None:
            return sum(len(r.key or b"") + len(r.value or b"") for r in self.given)
        return sum(
            int(c.key_ends[-1]) + int(np.clip(c.value_sizes, 0, None).sum()) if c.n else 0
            for c in self.columns
        )


def columns_of_records(records: Sequence[ConsumerRecord], digest: bool = False) -> Columns:
    """kafka-python's own records (no deserializers) as the :class:`Columns` that
    :func:`decode` makes of their bytes: the public path, taken where the private hooks
    are fenced off (:mod:`migcheck.kafka.private_hooks`).  A digest is taken of the
    value and headers encoded again as a record batch holds them."""
    keys = [r.key for r in records]
    sizes = np.array([0 if k is None else len(k) for k in keys], np.int64)
    return Columns(
        offsets=np.array([r.offset for r in records], np.int64),
        timestamps=np.array([r.timestamp for r in records], np.int64),
        key_ends=np.cumsum(sizes).astype(np.int32),
        key_null=np.array([k is None for k in keys], np.bool_),
        value_sizes=np.array([r.serialized_value_size for r in records], np.int32),
        key_data=np.frombuffer(b"".join(k for k in keys if k), np.uint8),
        digests=np.array([_digest_of(r.value, r.headers) for r in records], np.uint64)
        if digest
        else None,
    )


def _digest_of(value: bytes | None, headers: Sequence[tuple[str, bytes | None]] | None) -> int:
    """:func:`_fnv1a_64` of a value and headers as format v2 writes them after the key,
    encoded with kafka-python's own varint writer."""
    from kafka.record.util import encode_varint

    wire = bytearray()

    def field(data: bytes | None) -> None:  # a length (-1: null), then the bytes
        encode_varint(-1 if data is None else len(data), wire.append)
        wire.extend(data or b"")

    field(value)
    encode_varint(len(headers or ()), wire.append)
    for name, v in headers or ():
        field(name.encode())
        field(v)
    src = np.frombuffer(bytes(wire), np.uint8)
    return int(_fnv1a_64(src, 0, src.shape[0]))


# --- batches -----------------------------------------------------------------------


class _Transactions:
    """``read_committed``: which producers' batches belong to an aborted transaction.

    The fetch response lists aborted transactions by producer and first offset; a
    producer's batches are skipped from that offset until its abort marker.
    """

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        self.pending = deque(sorted(aborted, key=lambda t: t[1]))  # (producer, first offset)
        self.aborting: set[int] = set()

    def skips(self, producer: int, last_offset: int, transactional: bool, abort: bool) -> bool:
        """Whether a batch is skipped; an abort marker (``abort``) ends its producer's
        aborted transaction."""
        while self.pending and self.pending[0][1] <= last_offset:
            self.aborting.add(self.pending.popleft()[0])
        if abort:
            self.aborting.discard(producer)
            return False
        return transactional and producer in self.aborting


def _decompress(codec: int, data: memoryview, where: str) -> bytes:
    """A compressed batch's records, by kafka-python's codecs (its compression extras)."""
    from kafka import codec as codecs

    decoders = {
        1: ("gzip", codecs.has_gzip, lambda b: codecs.gzip_decode(b)),
        2: ("snappy", codecs.has_snappy, lambda b: codecs.snappy_decode(bytes(b))),
        3: ("lz4", codecs.has_lz4, lambda b: codecs.lz4_decode(bytes(b))),
        4: ("zstd", codecs.has_zstd, lambda b: codecs.zstd_decode(bytes(b))),
    }
    if codec not in decoders:
        raise ReadError(f"{where}: unknown compression codec {codec}")
    name, available, decode = decoders[codec]
    if not available():
        raise ReadError(f"{where}: no {name} decompressor installed (reinstall migcheck)")
    return bytes(decode(data))


def _is_abort_marker(records: memoryview, base_offset: int) -> bool:
    """Whether a control batch's record is an abort marker (key: version, type 0)."""
    one = _Builder(1, len(records))
    one.i, one.d, one.b, status = _loop(1)(
        np.frombuffer(records, np.uint8),
        1,
        base_offset,
        0,
        -1,
        base_offset,
        2**62,
        one.cols,
        0,
        0,
        0,
        False,
        False,
    )
    key = one.columns().key_data
    # numpy's stubs give an array the buffer protocol (__buffer__) on Python 3.12+ only.
    return (
        status == 0
        and one.i == 1
        and len(key) >= 4
        and struct.unpack(
            ">hh",
            key[:4],  # type: ignore[arg-type]
        )[1]
        == 0
    )


@dataclass
class Decoded:
    """One fetched partition's records, and where the next fetch starts."""

    columns: Columns
    next_offset: int
    leader_epoch: int


def decode(
    buf: bytes | memoryview,
    first: int,
    end: int,
    aborted: Iterable[tuple[int, int]],
    where: str,
    check_crc: bool = True,
    digest: bool = False,
    bodies: bool = False,
) -> Decoded:
    """The records of ``buf`` (a fetch response's bytes for one partition) with offsets in
    ``[first, end)``, committed ones only; with ``digest``, each one's digest of its value
    and headers too (:attr:`Columns.digests`); with ``bodies``, each one's value and headers
    as bytes (:func:`whole_records`).

    A trailing batch cut short by the fetch size is left for the next fetch.  Bytes
    that are not format v2, fail their CRC or do not parse raise :class:`ReadError`.
    """
    from crc32c import crc32c

    view = memoryview(buf)
    txns = _Transactions(aborted)
    out = _Builder(len(view) // 16, len(view) // 4, digest, bodies)
    pos, next_offset, epoch = 0, first, -1
    while pos + _HEADER.size <= len(view):
        (base, length, epoch_, magic, crc, attrs, last_delta, base_ts, max_ts, producer, _,
         _, count) = _HEADER.unpack_from(view, pos)  # fmt: skip
        batch_end = pos + _AFTER_LENGTH + length
        if magic != 2:
            raise ReadError(
                f"{where}: offset {base} is in message format v{magic}; the sample reads "
                "format v2 (Kafka 0.11 and later) only: use --full"
            )
        if batch_end > len(view) or base >= end:
            break
        if check_crc and crc32c(view[pos + _CRC_FROM : batch_end]) != crc:
            raise ReadError(f"{where}: the record batch at offset {base} fails its CRC check")
        records = view[pos + _HEADER.size : batch_end]
        pos, epoch = batch_end, epoch_
        next_offset = base + last_delta + 1
        control = bool(attrs & _CONTROL)
        abort = control and producer >= 0 and _is_abort_marker(records, base)
        if producer >= 0 and txns.skips(
            producer, next_offset - 1, bool(attrs & _TRANSACTIONAL), abort
        ):
            continue
        if control:
            continue
        if attrs & _CODEC_MASK:
            records = memoryview(_decompress(attrs & _CODEC_MASK, records, where))
        out.reserve(count, len(records))
        append_ts = max_ts if attrs & _LOG_APPEND_TIME else -1
        src = np.frombuffer(records, np.uint8)
        loop = _loop(count, digest or bodies)
        out.i, out.d, out.b, status = loop(src, count, base, base_ts, append_ts, first, end,
                                           out.cols, out.i, out.d, out.b, digest,
                                           bodies)  # fmt: skip
        if status < 0:
            raise ReadError(f"{where}: the record batch at offset {base} does not parse")
        if status == 1:
            next_offset = end
            break
    return Decoded(out.columns(), max(next_offset, first), epoch)
