"""Synthetic topics of known shape, sampled as migcheck samples a real one: the
coverage trials of sampled intervals (tests/unit/test_sampled_intervals.py, and
scripts/coverage-trials for the table in docs/sampling.md).

A shape is a log per partition: each record's offset and key.  The truth (the distinct
keys) is counted here from the log itself, never from migcheck.  The sample is what
migcheck's reader would read: its own window plan (``plan_units``) over the offsets,
and the records inside those windows, grouped by its own histories and figures code,
so that only the Kafka consumer is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

#: A shape: (records, key space, random generator) -> per partition, (offsets, keys).
Log = list[tuple[np.ndarray, np.ndarray]]
PARTITIONS = 4


def _spread(keys: np.ndarray) -> Log:
    """Keys in write order, each to partition ``key % PARTITIONS``, at consecutive offsets."""
    out = []
    for p in range(PARTITIONS):
        mine = keys[keys % PARTITIONS == p]
        out.append((np.arange(len(mine), dtype=np.int64), mine))
    return out


def uniform(n: int, space: int, rng: np.random.Generator) -> Log:
    return _spread(rng.integers(0, space, n))


def zipf(n: int, space: int, rng: np.random.Generator) -> Log:
    weights = 1.0 / np.arange(1, space + 1) ** 1.1
    return _spread(rng.choice(space, n, p=weights / weights.sum()))


def unique(n: int, space: int, rng: np.random.Generator) -> Log:
    return _spread(rng.permutation(n))


def drifting(n: int, space: int, rng: np.random.Generator) -> Log:
    """Keys that change over offsets: at time t, a key space of ``space / 2`` starting at
    ``4 t space`` (new users arrive, old ones leave)."""
    t = np.arange(n) / n
    return _spread((t * space * 4).astype(np.int64) + rng.integers(0, space // 2, n))


def bursts(n: int, space: int, rng: np.random.Generator) -> Log:
    """Each key written 2 to 5 times in a row (an order's events), never again."""
    sizes = rng.integers(2, 6, n // 3)
    return _spread(np.repeat(np.arange(len(sizes)), sizes)[:n])


def compacted(n: int, space: int, rng: np.random.Generator) -> Log:
    """A compacted log: uniform updates, of which the cleaner kept each key's latest in
    all but the last fifth of the offsets (the dirty head, which it has not cleaned)."""
    out = []
    for offsets, keys in uniform(n, space, rng):
        head = int(len(keys) * 0.8)
        last = {int(k): i for i, k in enumerate(keys)}
        kept = np.array(sorted(i for i in set(last.values()) if i < head), dtype=np.int64)
        keep = np.concatenate([kept, np.arange(head, len(keys))])
        out.append((offsets[keep], keys[keep]))
    return out


SHAPES: dict[str, Callable[[int, int, np.random.Generator], Log]] = {
    "uniform": uniform,
    "zipf": zipf,
    "unique": unique,
    "drifting": drifting,
    "bursts": bursts,
    "compacted": compacted,
}

#: The shapes whose keys are exchangeable over offsets: the 95% interval must hold.
STATIONARY = ("uniform", "zipf", "unique")


@dataclass(frozen=True)
class Trial:
    truth: int
    estimate: int
    interval: list[int]
    bounds: list[int]
    holds: bool
    findings: list[str]

    @property
    def covered(self) -> bool:
        return self.interval[0] <= self.truth <= self.interval[1]

    @property
    def half_width(self) -> float:
        """The interval's farther end from the truth, as a share of the truth."""
        return max(self.truth - self.interval[0], self.interval[1] - self.truth) / self.truth


def trial(shape: str, records: int, space: int, share: float, seed: int) -> Trial:
    """One sample of a fresh log of ``shape``: a share ``share`` of each partition read."""
    from migcheck.analysis.aggregate import KeyStats, SampleFigures
    from migcheck.analysis.entries import Scale, distinct_keys
    from migcheck.analysis.figures import figure_spec, history_figures
    from migcheck.analysis.histories import partition_histories
    from migcheck.kafka.fetch import plan_units, window_starts
    from migcheck.kafka.metadata import PartitionMeta, TopicMeta

    log = SHAPES[shape](records, space, np.random.default_rng(seed))
    truth = len(np.unique(np.concatenate([k for _, k in log])))
    parts = tuple(PartitionMeta(p, 0, int(o[-1]) + 1) for p, (o, _) in enumerate(log))
    meta = TopicMeta("t", "compact" if shape == "compacted" else "delete", PARTITIONS, parts)
    per_partition = int(share * records / PARTITIONS)
    units = plan_units([meta], per_partition)
    starts = window_starts(units)
    spec = figure_spec([meta], [], [PARTITIONS], 0)
    figures = []
    scanned = {}
    read_keys = []
    for p, (offsets, keys) in enumerate(log):
        inside = _inside(offsets, p, units)
        read_keys.append(keys[inside])
        table = _records(p, offsets[inside], keys[inside])
        scanned[p] = int(inside.sum())
        histories = partition_histories(table, (), starts.get(("t", p), ()))
        figures.append(history_figures(histories, spec)["t"])
    first = figures[0]
    for f in figures[1:]:
        first.merge(f, 0)
    seen = len(np.unique(np.concatenate(read_keys)))
    stats = KeyStats(seen, {}, sample=SampleFigures(first.freq, first.masks, first.spread))
    scale = Scale(meta.sampled(per_partition), meta.compacted, meta.offsets, scanned)
    total = sum(end - start for start, end in meta.offsets.values())
    keys = distinct_keys(stats, scale, total, per_partition)
    assert keys.interval and keys.bounds and keys.assumption
    a = keys.assumption
    return Trial(truth, keys.estimate, keys.interval, keys.bounds, a["holds"], a["findings"])


def _inside(offsets: np.ndarray, partition: int, units: list) -> np.ndarray:  # type: ignore[type-arg]
    inside = np.zeros(len(offsets), dtype=bool)
    for u in units:
        if u.partition == partition:
            inside |= (offsets >= u.start) & (offsets < u.end)
    return inside


def _records(partition: int, offsets: np.ndarray, keys: np.ndarray) -> pa.Table:
    """The records as the reader yields them (``RECORD_SCHEMA``): 8-byte keys, 10-byte values."""
    from migcheck.kafka.fetch import RECORD_SCHEMA

    n = len(offsets)
    return pa.table(
        {
            "topic": pa.array(["t"] * n, pa.string()),
            "partition": pa.array(np.full(n, partition), pa.int32()),
            "offset": pa.array(offsets, pa.int64()),
            "key": pa.array([int(k).to_bytes(8, "big") for k in keys], pa.binary()),
            "key_size": pa.array(np.full(n, 8), pa.int32()),
            "value_size": pa.array(np.full(n, 10), pa.int32()),
            "timestamp": pa.array(np.zeros(n, dtype=np.int64), pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )
