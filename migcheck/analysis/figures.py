"""Figures: every number the report needs from key histories, as sums that add up.

Each figure of :mod:`migcheck.analysis.aggregate` is a sum over history rows (one row
per topic, partition and key), or the few lowest-ranked rows of a kind, for every
scored (key layout, partitioner) pair and every proposed count at once: records per
partition, keys seen once and twice, each pair's conformance, the state cells (from
an observed partition to a new one), the keys a pair does not place, the keys either
of two pairs places, the keys two pairs put apart, and the moved keys of lowest rank.
So figures of any batches of history rows merge into the figures of all of them
(:meth:`TopicFigures.merge`), in any order: a read task computes them for the whole
partitions it holds, and only they, not a row per key, cross into Spark's JVM; Spark
computes them over the histories it holds (merged partials, a key export) with the
same function.  Only the distinct keys are not a sum (a key seen on two partitions
counts once); :func:`unique_keys` says when the rows count them anyway.

Pure Arrow and numpy: tested without Spark.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from migcheck.analysis.histories import Scored, placement_name
from migcheck.analysis.statistics import FREQ_CAP, SPREAD_CAP
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout

#: Per state cell: keys, records, bytes and squared bytes.
CellSums = list[float]
#: A moved key of the stable sample: (rank, key, observed partition, new partition).
Lowest = tuple[int, bytes, int, int]


@dataclass(frozen=True)
class Spec:
    """What the figures are computed for: the scored pairs, the proposed counts, the
    moved keys kept per pair and count, and each topic's (partition count, compacted)."""

    scored: tuple[Scored, ...]
    candidates: tuple[int, ...]
    sample: int
    topics: Mapping[str, tuple[int, bool]]

    def pairs(self) -> list[tuple[Scored, Scored]]:
        """Every two scored pairs of one key layout, in preference order."""
        s = self.scored
        return [(a, b) for i, a in enumerate(s) for b in s[i + 1 :] if a[0] == b[0]]


@dataclass
class TopicFigures:
    """One topic's figures over some of its history rows."""

    scanned: dict[int, int] = field(default_factory=dict)  # partition -> records
    null_keys: int = 0  # records with a null key
    rows: int = 0  # keyed history rows: (key, partition) pairs
    #: a sample's windowed keyed rows (:data:`~migcheck.analysis.histories.Windows`), per
    #: (partition, records read, at most FREQ_CAP + 1): the distinct keys' estimate
    freq: dict[tuple[int, int], int] = field(default_factory=dict)
    #: the same rows per set of windows they were read in: keys shared between windows
    masks: dict[int, int] = field(default_factory=dict)
    #: the same rows per records read (2 up to SPREAD_CAP): [rows, rows read in one window]
    spread: dict[int, list[int]] = field(default_factory=dict)
    #: per pair: [keys hashed, keys where it places them, keyed records it did not hash]
    scores: dict[Scored, list[int]] = field(default_factory=dict)
    #: per pair: [keys hashed but not where it places them, their records]
    nonconforming: dict[Scored, list[int]] = field(default_factory=dict)
    #: per (pair, count): per (observed, new partition): the state's sums
    cells: dict[tuple[Scored, int], dict[tuple[int, int], CellSums]] = field(default_factory=dict)
    #: per (pair, count): the moved state keys of lowest (rank, key), at most ``sample``
    lowest: dict[tuple[Scored, int], list[Lowest]] = field(default_factory=dict)
    #: per two pairs of a layout: the keys either places where they are
    either: dict[tuple[Scored, Scored], int] = field(default_factory=dict)
    #: per (two pairs of a layout, count): the keys they put on different partitions
    splits: dict[tuple[Scored, Scored, int], int] = field(default_factory=dict)

    def merge(self, other: TopicFigures, sample: int) -> None:
        """Add ``other``'s figures to these."""
        _add(self.scanned, other.scanned)
        self.null_keys += other.null_keys
        self.rows += other.rows
        _add(self.freq, other.freq)
        _add(self.masks, other.masks)
        _add_lists(self.spread, other.spread)
        _add_lists(self.scores, other.scores)
        _add_lists(self.nonconforming, other.nonconforming)
        for key, cells in other.cells.items():
            _add_lists(self.cells.setdefault(key, {}), cells)
        for key, keys in other.lowest.items():
            self.lowest[key] = sorted([*self.lowest.get(key, []), *keys])[:sample]
        _add(self.either, other.either)
        _add(self.splits, other.splits)

    def unique_keys(self) -> bool:
        """Whether no key can be on two partitions, so the rows are the distinct keys: some
        pair put every keyed row where it places that key (one partition per key)."""
        return any(s[1] == self.rows for s in self.scores.values())


Figures = dict[str, TopicFigures]


#: Per topic: the partitioner and key layout its prediction uses (no partitioner: the
#: topic is not predicted).
Chosen = Mapping[str, tuple[str | None, KeyLayout]]

#: A moved key's row, as ``--moved-keys-out`` writes it: topic, the key in hex, its
#: observed partition, the proposed count and its partition there.
MovedKeyRow = tuple[str, str, int, int, int]


class MovedKeys(Protocol):
    """Every moved key of a read, computed when asked (a full scan's may be millions)."""

    def rows(self) -> Iterator[MovedKeyRow]:
        """The moved keys, ordered by topic, proposed count and key, a few at a time."""
        ...


@runtime_checkable
class FigureSource(Protocol):
    """Where :func:`~migcheck.analysis.aggregate.aggregate` takes its figures from: read
    tasks that compute them, the driver's read, or histories Spark holds (one module
    of :mod:`migcheck.analysis.scan` each).  ``spec`` is the read plan's, the one spec
    of the analysis: the source computes its figures for it."""

    spec: Spec

    def figures(self) -> Figures:
        """Every topic's figures (the first call reads the records)."""
        ...

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        """Per topic of ``topics``: its distinct keys (after :meth:`figures`)."""
        ...

    def moved_keys(self, chosen: Chosen) -> MovedKeys | None:
        """Every moved key, or None when the source keeps no row per key."""
        ...

    def release(self) -> None:
        """Drop what Spark caches for this source: a long-lived session (``migrate``'s)
        scores a copy's source once and goes on."""
        ...


def figure_spec(
    topics: Sequence[TopicMeta], scored: Sequence[Scored], candidates: Sequence[int], sample: int
) -> Spec:
    """What the figures of ``topics`` are computed for."""
    metas = {t.name: (t.partition_count, t.compacted) for t in topics}
    return Spec(tuple(scored), tuple(int(m) for m in candidates), sample, metas)


def _add(into: dict, other: dict) -> None:
    for key, value in other.items():
        into[key] = into.get(key, 0) + value


def _add_lists(into: dict, other: dict) -> None:
    for key, values in other.items():
        held = into.get(key)
        added = values if held is None else [a + b for a, b in zip(held, values, strict=True)]
        into[key] = list(added)


def merge_all(parts: Iterable[Figures], sample: int) -> Figures:
    """The figures of all ``parts`` together."""
    out: Figures = {}
    for part in parts:
        for topic, figures in part.items():
            out.setdefault(topic, TopicFigures()).merge(figures, sample)
    return out


def history_figures(histories: pa.Table | pa.RecordBatch, spec: Spec) -> Figures:
    """The figures of ``histories`` (:data:`~migcheck.analysis.histories.HISTORY_SCHEMA`
    rows with a placement column per pair of ``spec``), per topic."""
    table = histories if isinstance(histories, pa.Table) else pa.Table.from_batches([histories])
    topics = pc.unique(table.column("topic")).to_pylist()
    if len(topics) == 1:
        return {topics[0]: _topic_figures(table, spec, *spec.topics[topics[0]])}
    return {
        t: _topic_figures(table.filter(pc.equal(table.column("topic"), t)), spec, *spec.topics[t])
        for t in topics
    }


def _np(column: pa.ChunkedArray | pa.Array, fill: int | float | bool = 0) -> np.ndarray:
    """A column as numpy, nulls filled."""
    return pc.fill_null(column, fill).to_numpy(zero_copy_only=False)


def _topic_figures(table: pa.Table, spec: Spec, current: int, compacted: bool) -> TopicFigures:
    keys = table.column("key")
    keyed = pc.is_valid(keys).to_numpy(zero_copy_only=False)
    part = _np(table.column("partition")).astype(np.int64)
    n = _np(table.column("n")).astype(np.int64)
    out = TopicFigures(
        scanned=_sums_by(part, n),
        null_keys=int(n[~keyed].sum()),
        rows=int(keyed.sum()),
    )
    if not out.rows:
        return out
    _window_figures(out, keyed, part, n, _np(table.column("windows")).astype(np.int64))
    live = ~(_np(table.column("tombstoned"), False).astype(bool) & compacted)
    last = _np(table.column("last_bytes")).astype(np.int64)
    state = _State(
        part,
        np.ones_like(n) if compacted else n,
        last if compacted else _np(table.column("bytes")).astype(np.int64),
        last.astype(np.float64) ** 2 if compacted else _np(table.column("bytes_sq"), 0.0),
        _np(table.column("rank")).astype(np.int64),
        keys,
    )
    placed: dict[Scored, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for pair in spec.scored:
        column = table.column(placement_name(pair))
        valid = pc.is_valid(column).to_numpy(zero_copy_only=False)
        v = _np(column).astype(np.int64)
        fits = valid & (v % current == part)
        placed[pair] = (v, valid, fits)
        out.scores[pair] = [int(valid.sum()), int(fits.sum()), int(n[keyed & ~valid].sum())]
        off = valid & ~fits
        out.nonconforming[pair] = [int(off.sum()), int(n[off].sum())]
        for m in spec.candidates:
            _state_figures(out, state, (pair, m), v, fits & live, spec.sample)
    for a, b in spec.pairs():
        (va, oka, fa), (vb, okb, fb) = placed[a], placed[b]
        out.either[a, b] = int((fa | fb).sum())
        both = oka & okb
        for m in spec.candidates:
            out.splits[a, b, m] = int((both & (va % m != vb % m)).sum())
    return out


def _window_figures(
    out: TopicFigures, keyed: np.ndarray, part: np.ndarray, n: np.ndarray, windows: np.ndarray
) -> None:
    """A sample's figures of its windowed keyed rows: read counts, window sets, spread."""
    rows = keyed & (windows != 0)
    if not rows.any():
        return
    capped = np.minimum(n[rows], FREQ_CAP + 1)
    out.freq = _counts(part[rows] * (FREQ_CAP + 2) + capped, FREQ_CAP + 2)
    out.masks = {int(m): c for (m, _), c in _counts(windows[rows], 1).items()}
    single = (windows & (windows - 1)) == 0
    for k in range(2, SPREAD_CAP + 1):
        at = rows & (n == k)
        if at.any():
            out.spread[k] = [int(at.sum()), int((at & single).sum())]


def _counts(codes: np.ndarray, base: int) -> dict[tuple[int, int], int]:
    """How often each code occurs, as (code // base, code % base)."""
    values, counts = np.unique(codes, return_counts=True)
    return {(int(v) // base, int(v) % base): int(c) for v, c in zip(values, counts, strict=True)}


@dataclass(frozen=True)
class _State:
    """A topic's history rows as state: each row's partition, state records and bytes
    (the live record's in a compacted topic), rank and key."""

    partition: np.ndarray
    records: np.ndarray
    bytes: np.ndarray
    bytes_sq: np.ndarray
    rank: np.ndarray
    keys: pa.ChunkedArray


def _state_figures(
    out: TopicFigures, s: _State, at: tuple[Scored, int], v: np.ndarray, state: np.ndarray, k: int
) -> None:
    """The state cells and the lowest moved keys of one pair at one count ``m``."""
    m = at[1]
    new = v % m
    code = s.partition[state] * m + new[state]
    cells, inverse = np.unique(code, return_inverse=True)
    sums = [np.bincount(inverse, minlength=len(cells))]
    sums += [np.bincount(inverse, x[state], len(cells)) for x in (s.records, s.bytes, s.bytes_sq)]
    out.cells[at] = {
        (int(c) // m, int(c) % m): [int(sums[0][i]), int(sums[1][i]), int(sums[2][i]), sums[3][i]]
        for i, c in enumerate(cells)
    }
    if k > 0:
        out.lowest[at] = _lowest(s, state & (new != s.partition), new, k)


def _lowest(s: _State, moved: np.ndarray, new: np.ndarray, k: int) -> list[Lowest]:
    """The ``k`` moved rows of lowest (rank, key): every row up to the ``k``-th rank is
    sorted in Python, ties included."""
    ranks = s.rank[moved]
    if len(ranks) > k:
        moved = moved & (s.rank <= np.partition(ranks, k - 1)[k - 1])
    rows = np.flatnonzero(moved)
    keys = s.keys.take(pa.array(rows)).to_pylist()
    ranks, parts, news = s.rank[rows].tolist(), s.partition[rows].tolist(), new[rows].tolist()
    found = zip(ranks, keys, parts, news, strict=True)
    return sorted(found)[:k]


def _sums_by(part: np.ndarray, n: np.ndarray) -> dict[int, int]:
    """``n`` summed per partition."""
    counts = np.bincount(part, n)
    return {int(p): int(counts[p]) for p in np.flatnonzero(np.bincount(part))}


# --- as rows: what Spark's tasks hand the driver ---------------------------------

#: A figures row: its topic and the pickled figures; a key row (:func:`keyed_rows`) has
#: the topic and the key.  One schema, so a read task yields both.
FIGURES_DDL = "topic string, key binary, figures binary"
FIGURES_SCHEMA = pa.schema([("topic", pa.string()), ("key", pa.binary()), ("figures", pa.binary())])


def figures_batch(figures: Figures) -> pa.RecordBatch:
    """``figures`` as one row of :data:`FIGURES_SCHEMA` (pickled: only our own workers
    write it, and only our driver reads it)."""
    blob = pickle.dumps(figures, protocol=pickle.HIGHEST_PROTOCOL)
    return pa.record_batch([pa.array([None], pa.string()), pa.array([None], pa.binary()),
                            pa.array([blob], pa.binary())], schema=FIGURES_SCHEMA)  # fmt: skip


def from_rows(blobs: Iterable[bytes], sample: int) -> Figures:
    """The merged figures of the rows' pickled figures."""
    return merge_all((pickle.loads(b) for b in blobs), sample)


def keyed_rows(histories: pa.RecordBatch) -> pa.RecordBatch:
    """The keyed rows' (topic, key) in :data:`FIGURES_SCHEMA`, for the distinct keys."""
    keyed = histories.filter(pc.is_valid(histories.column("key")))
    nulls = pa.nulls(keyed.num_rows, pa.binary())
    columns = [keyed.column("topic"), keyed.column("key"), nulls]
    return pa.record_batch(columns, schema=FIGURES_SCHEMA)


def figures_of_batches(
    batches: Iterable[pa.RecordBatch], spec: Spec, keys: bool = False
) -> Iterator[pa.RecordBatch]:
    """A task's figures of its history batches, as one row at the end; with ``keys``,
    each batch's keyed (topic, key) rows first (see :func:`keyed_rows`)."""
    parts: list[Figures] = []
    for batch in batches:
        if not batch.num_rows:
            continue
        parts.append(history_figures(batch, spec))
        if keys:
            yield keyed_rows(batch)
    yield figures_batch(merge_all(parts, spec.sample))


def distinct_keys(histories: pa.Table, topics: Sequence[str]) -> dict[str, int]:
    """Per topic of ``topics``: its distinct keys in an in-memory table of histories."""
    keyed = histories.filter(pc.is_valid(histories.column("key")))
    out: dict[str, int] = {}
    for topic in topics:
        keys = keyed.filter(pc.equal(keyed.column("topic"), topic)).column("key")
        out[topic] = len(pc.unique(keys))
    return out
