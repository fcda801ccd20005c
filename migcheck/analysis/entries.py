"""Report entries from aggregates: pure functions, one topic and one candidate at a time.

The input is a topic's metadata and its :class:`TopicAggregates`; the output is
the topic's entry of the report (:class:`~migcheck.model.analyze.TopicEntry`).
In sample mode a key's movement depends on its hash alone, not on how often it
was written, so the keys a sample sees are a fair sample for the moved
fraction; totals are scaled per partition and carry 95% intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from migcheck.analysis.aggregate import Cell, KeyStats, SampledKey, TopicAggregates
from migcheck.analysis.statistics import (
    Group,
    Stratum,
    WindowShape,
    distinct_interval,
    distinct_range,
    drift_findings,
    expected_moved_fraction,
    skew,
    stratified_total,
    wilson_interval,
)
from migcheck.analysis.verdicts import (
    KEY_SUFFIX,
    ambiguous_verdict,
    mixed_verdict,
    topic_verdict,
    unpredictable_verdict,
)
from migcheck.hashing.keys import printable
from migcheck.hashing.partitioners import PARTITIONERS
from migcheck.kafka.fetch import sample_windows
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import (
    ASSUMPTION,
    Bounds,
    CandidateEntry,
    KeyLayout,
    LoadEntry,
    MovedKey,
    PartitionEntry,
    SampleAssumption,
    State,
    TopicEntry,
    Verdict,
)


@dataclass(frozen=True)
class Scale:
    """How a topic's sample scales up: ``keys`` (the estimate) and ``keys_interval``
    (its 95% interval, or the bounds where the sample does not represent the log)
    multiply keys seen; ``unread_keys`` is the most keys the unread records can hold;
    ``offsets`` are each partition's (start, end)."""

    sampled: bool
    compacted: bool
    offsets: dict[int, tuple[int, int]]
    scanned: dict[int, int]
    keys: float = 1.0
    keys_interval: tuple[float, float] = (1.0, 1.0)
    unread_keys: int = 0
    holds: bool = True  # the windows bear out the intervals' assumption


def topic_entry(
    meta: TopicMeta,
    candidates: Sequence[int],
    agg: TopicAggregates,
    forced: bool,
    sample_per_partition: int | None,
) -> TopicEntry:
    """The topic's report entry: facts, one entry per candidate, and the verdict."""
    stats = agg.key_stats
    offsets = meta.offsets or {p: (0, c) for p, c in agg.scanned.items()}
    records_scanned = sum(agg.scanned.values())
    records_total = (
        sum(end - start for start, end in offsets.values()) if meta.offsets else records_scanned
    )
    scale = Scale(meta.sampled(sample_per_partition), meta.compacted, offsets, agg.scanned)
    keys = distinct_keys(agg.key_stats, scale, records_total, sample_per_partition)
    scale = keys.scale
    scores = stats.scores.get(agg.key_layout, {}) if stats else {}
    conformance_by = {name: s.conformance for name, s in scores.items()}
    name = agg.partitioner
    state_records, state_bytes = _state_size(agg.cells, candidates, scale)
    entry: TopicEntry = {
        "topic": meta.name,
        "cleanup_policy": meta.cleanup_policy,
        "current_partitions": meta.partition_count,
        "partitioner": name,
        "partitioner_forced": forced,
        "predictable": name is not None or stats is None,
        "conformance": _conformance(conformance_by, name),
        "conformance_by_partitioner": conformance_by,
        "records_total": records_total,
        "records_scanned": records_scanned,
        "null_key_records": agg.null_keys,
        "unhashed_records": scores[name].unhashed_records if name in scores else 0,
        "non_conforming_records": agg.non_conforming_records,
        "non_conforming_keys": agg.non_conforming_keys,
        "sampled": scale.sampled,
        "distinct_keys": keys.estimate,
        "distinct_keys_interval": keys.interval,
        "distinct_keys_bounds": keys.bounds,
        "sample_assumption": keys.assumption,
        "state": State.LIVE if meta.compacted else State.LOG,
        "state_records": state_records,
        "state_bytes": state_bytes,
        "partitions": _partition_entries(offsets, agg.scanned),
        "candidates": [],
        "verdict": _refusal(agg, conformance_by, meta.partition_count),
        "clients": PARTITIONERS[name].clients if name in PARTITIONERS else None,
        "placed_alike": list(agg.placed_alike),
        "mixed_shares": [
            {"partitioners": list(s.partitioners), "share": s.share} for s in agg.mixed
        ],
    }
    if agg.layouts != (KeyLayout.PLAIN,):  # only plain keys allowed: the report as it was
        entry["key_layout"] = agg.key_layout
    if not entry["predictable"]:
        return entry
    entry["candidates"] = [
        candidate_entry(meta.partition_count, m, agg.cells, agg.samples, scale, agg.key_layout)
        for m in candidates
    ]
    entry["verdict"] = topic_verdict(entry)
    return entry


def _refusal(
    agg: TopicAggregates, conformance_by: dict[str, float | None], partitions: int
) -> Verdict:
    """Why nothing is predicted (the verdict of a topic that turns out unpredictable):
    two clients wrote it, several partitioners fit it alike but disagree (always, on
    one partition), or none fits."""
    if agg.mixed:
        return mixed_verdict(agg.mixed)
    if agg.placed_alike and any(agg.splits.values()):
        first = next(n for n, c in conformance_by.items() if c == 1.0)
        return ambiguous_verdict([first, *agg.placed_alike], agg.splits, partitions)
    return unpredictable_verdict(conformance_by, agg.key_layout)


@dataclass(frozen=True)
class DistinctKeys:
    """A topic's distinct keys as reported, and the scale they set."""

    estimate: int
    interval: list[int] | None
    bounds: list[int] | None
    assumption: SampleAssumption | None
    scale: Scale


def distinct_keys(
    stats: KeyStats | None, scale: Scale, records_total: int, sample_per_partition: int | None
) -> DistinctKeys:
    """Distinct keys: exact, or when sampled an estimate with its 95% interval under the
    stated assumption (the certain bounds where the windows show it fails) and the
    bounds beside it; and the scale that takes the sample's key counts to the log."""
    seen = stats.distinct_keys if stats else 0
    if not (scale.sampled and stats and sample_per_partition):
        return DistinctKeys(seen, None, None, None, scale)
    lo_b, hi_b = distinct_range(seen, records_total - sum(scale.scanned.values()))
    groups = _read_alike(stats.sample.freq, scale, sample_per_partition)
    est, lo, hi = distinct_interval(seen, groups)
    windows = sample_windows(sample_per_partition)[0]
    findings = drift_findings(WindowShape(windows, stats.sample.masks, stats.sample.spread))
    if findings:  # the interval's assumption fails: only the bounds are sure
        lo, hi = lo_b, hi_b
    # no estimate or interval reaches past what is certain
    est, lo, hi = (min(max(x, lo_b), hi_b) for x in (est, lo, hi))
    per_seen = 1 / max(seen, 1)
    scale = replace(scale, keys=est * per_seen, keys_interval=(lo * per_seen, hi * per_seen),
                    unread_keys=hi_b - seen, holds=not findings)  # fmt: skip
    assumption: SampleAssumption = {
        "assumption": ASSUMPTION,
        "holds": not findings,
        "findings": findings,
    }
    interval = [math.floor(lo), math.ceil(hi)]
    return DistinctKeys(round(est), interval, [lo_b, hi_b], assumption, scale)


#: Partitions whose sampled shares are within this factor of each other are fitted
#: together: the estimate assumes one sampling rate per group.
_RATE_STEP = 1.1


def _read_alike(
    freq: dict[tuple[int, int], int], scale: Scale, sample_per_partition: int
) -> list[Group]:
    """The sample's keys per times read, in groups of partitions of about the same share
    read (the offsets of their windows over their offsets), with each group's share."""
    count, width = sample_windows(sample_per_partition)
    step: dict[int, int] = {}
    shares: dict[int, list[int]] = {}  # per group: offsets read, offsets
    for p in sorted({p for p, _ in freq}):
        start, end = scale.offsets.get(p, (0, 0))
        size = max(end - start, 1)
        read = min(count * width, size)
        step[p] = round(math.log(read / size) / math.log(_RATE_STEP))
        held = shares.setdefault(step[p], [0, 0])
        held[0], held[1] = held[0] + read, held[1] + size
    by_times: dict[int, dict[int, int]] = {}
    for (p, j), keys in freq.items():
        group = by_times.setdefault(step[p], {})
        group[j] = group.get(j, 0) + keys
    return [(by_times[g], read / size) for g, (read, size) in sorted(shares.items())]


def _conformance(conformance_by: dict[str, float | None], name: str | None) -> float | None:
    """The chosen partitioner's conformance, or the best scored when none was chosen."""
    if name:
        return conformance_by.get(name)
    return max((c for c in conformance_by.values() if c is not None), default=None)


def _partition_entries(
    offsets: dict[int, tuple[int, int]], scanned: dict[int, int]
) -> list[PartitionEntry]:
    return [
        {
            "partition": p,
            "log_start_offset": offsets[p][0],
            "log_end_offset": offsets[p][1],
            "records_scanned": scanned.get(p, 0),
        }
        for p in sorted(offsets)
    ]


def _state_size(cells: Sequence[Cell], candidates: Sequence[int], scale: Scale) -> tuple[int, int]:
    """The state's records and bytes (any one candidate's cells hold every state key)."""
    first = [c for c in cells if c.m == candidates[0]]
    records = sum(c.records for c in first)
    size = sum(c.bytes for c in first)
    if scale.sampled and not scale.compacted:
        read = sum(scale.scanned.values())
        population = sum(end - start for start, end in scale.offsets.values())
        factor = population / read if read else 0.0
    else:
        factor = scale.keys
    return round(records * factor), round(size * factor)


#: The largest matrix (rows x columns) the report carries whole.  Past it, a dense
#: matrix is mostly zeros that cost memory and nobody reads (10,000 -> 12,000
#: partitions is 120 million cells); the nonzero cells are in ``flows`` anyway.
MATRIX_MAX_CELLS = 250_000


def candidate_entry(
    n: int,
    m: int,
    cells: Sequence[Cell],
    samples: Sequence[SampledKey],
    scale: Scale,
    layout: KeyLayout = KeyLayout.PLAIN,
) -> CandidateEntry:
    """What moves going from ``n`` to ``m`` partitions, exact or estimated from the sample."""
    mc = [c for c in cells if c.m == m]
    flows: dict[tuple[int, int], int] = {}
    load_keys = [0] * m
    load_bytes = [0] * m
    for c in mc:
        if 0 <= c.partition < n:
            flows[c.partition, c.new] = flows.get((c.partition, c.new), 0) + c.keys
        load_keys[c.new] += c.keys
        load_bytes[c.new] += c.bytes
    moved = [c for c in mc if c.moved]
    moved_keys = sum(c.keys for c in moved)
    state_keys = sum(c.keys for c in mc)  # every state key is in each candidate's cells
    cand: CandidateEntry = {
        "partitions": m,
        "moved_keys": moved_keys,
        "moved_keys_interval": None,
        "moved_keys_bounds": None,
        "moved_fraction": moved_keys / state_keys if state_keys else 0.0,
        "moved_fraction_interval": None,
        "moved_fraction_bounds": None,
        "expected_moved_fraction": expected_moved_fraction(n, m),
        "moved_records": sum(c.records for c in moved),
        "moved_records_interval": None,
        "moved_records_bounds": None,
        "moved_bytes": sum(c.bytes for c in moved),
        "moved_bytes_interval": None,
        "moved_bytes_bounds": None,
        "matrix": None,
        "flows": [],
        "load": [],
        "skew": 0.0,
        "moved_key_sample": _moved_keys(samples, m, layout),
    }
    if scale.sampled:
        cand.update(_estimates(cand, mc, moved_keys, state_keys, scale))  # type: ignore[typeddict-item]
        load_keys = [round(k * scale.keys) for k in load_keys]
        load_bytes = [round(b * scale.keys) for b in load_bytes]
        flows = {cell: round(k * scale.keys) for cell, k in flows.items()}
    cand["flows"] = [[p, q, k] for (p, q), k in sorted(flows.items()) if k]
    if n * m <= MATRIX_MAX_CELLS:
        matrix = cand["matrix"] = [[0] * m for _ in range(n)]
        for (p, q), k in flows.items():
            matrix[p][q] = k
    cand["load"] = [
        LoadEntry(partition=p, keys=load_keys[p], bytes=load_bytes[p]) for p in range(m)
    ]
    cand["skew"] = skew(load_keys)
    return cand


def _moved_keys(samples: Sequence[SampledKey], m: int, layout: KeyLayout) -> list[MovedKey]:
    return [
        {
            "key": key_for_people(s.key, layout),
            "key_hex": s.key.hex(),
            "partition": s.partition,
            "new_partition": s.new,
        }
        for s in sorted(samples, key=lambda s: s.rank)
        if s.m == m
    ]


def key_for_people(key: bytes, layout: KeyLayout) -> str:
    """A key as people read it: under a window or session layout, the inner key (what was
    hashed, the source key) with its window in epoch milliseconds, ``key@start`` or
    ``key@start..end``, since the suffix's bytes are unreadable and one inner key may
    have many windows.  ``key_hex`` stays the whole key, the state entry's identity."""
    size = KEY_SUFFIX[layout]
    if size == 0 or len(key) < size:
        return printable(key)
    inner, suffix = key[: len(key) - size], key[len(key) - size :]
    first = int.from_bytes(suffix[:8], "big", signed=True)
    if layout == KeyLayout.WINDOW:  # [window start][seqnum]
        return f"{printable(inner)}@{first}"
    second = int.from_bytes(suffix[8:16], "big", signed=True)  # [session end][session start]
    return f"{printable(inner)}@{second}..{first}"


def _estimates(
    cand: CandidateEntry, cells: Sequence[Cell], moved_keys: int, state_keys: int, scale: Scale
) -> dict[str, object]:
    """One candidate's sample counts as estimates with 95% intervals, and the certain
    bounds beside them.

    The moved fraction has a Wilson interval.  The unread keys (the distinct keys'
    interval less those seen, as a share of the state keys) move in the fraction's
    interval, so moved keys run from the moved keys seen plus the least unread at the
    least fraction, to the most at the most.  Bounds: every unread record may be a new
    key, and each may move or not.
    """
    lo, hi = wilson_interval(moved_keys, state_keys)
    keys = round(cand["moved_fraction"] * state_keys * scale.keys)
    r_lo, r_hi = scale.keys_interval
    keys_interval = [moved_keys + lo * state_keys * max(0.0, r_lo - 1),
                     moved_keys + hi * state_keys * max(0.0, r_hi - 1)]  # fmt: skip
    unread = scale.unread_keys
    everything = max(1, state_keys + unread)
    keys_bounds: Bounds = [moved_keys, moved_keys + unread]
    if not scale.holds:  # the keys' interval is their bounds (see distinct_keys)
        keys_interval = [moved_keys, moved_keys + unread]
    out: dict[str, object] = {
        "moved_fraction_interval": [lo, hi],
        "moved_fraction_bounds": [moved_keys / everything, (moved_keys + unread) / everything],
        "moved_keys": keys,
        "moved_keys_interval": keys_interval,
        "moved_keys_bounds": keys_bounds,
        "moved_bytes_bounds": [cand["moved_bytes"], None],  # no read bounds unread sizes
    }
    if scale.compacted:
        # one live record per key: records follow keys, bytes follow the mean live size
        mean_bytes = cand["moved_bytes"] / moved_keys if moved_keys else 0.0
        out["moved_records"] = keys
        out["moved_records_interval"] = list(keys_interval)
        out["moved_records_bounds"] = list(keys_bounds)
        out["moved_bytes"] = round(keys * mean_bytes)
        out["moved_bytes_interval"] = [v * mean_bytes for v in keys_interval]
        return out
    records, byts = _moved_strata(cells, scale)
    unread_records = sum(s.population - s.sampled for s in records)
    out["moved_records_bounds"] = [cand["moved_records"], cand["moved_records"] + unread_records]
    est, lo_r, hi_r = stratified_total(records)
    out["moved_records"], out["moved_records_interval"] = round(est), [lo_r, hi_r]
    est, lo_b, hi_b = stratified_total(byts)
    out["moved_bytes"], out["moved_bytes_interval"] = round(est), [lo_b, hi_b]
    return out


def _moved_strata(cells: Sequence[Cell], scale: Scale) -> tuple[list[Stratum], list[Stratum]]:
    """Per observed partition: the sample's moved records, and its moved bytes, as strata."""
    moved_by_partition: dict[int, list[float]] = {}
    for c in cells:
        if c.moved:
            acc = moved_by_partition.setdefault(c.partition, [0.0, 0.0, 0.0])
            acc[0] += c.records
            acc[1] += c.bytes
            acc[2] += c.bytes_sq
    records, byts = [], []
    for p, (start, end) in scale.offsets.items():
        population = max(end - start, scale.scanned.get(p, 0))
        sampled = scale.scanned.get(p, 0)
        rec, byt, byt_sq = moved_by_partition.get(p, [0.0, 0.0, 0.0])
        records.append(Stratum(population, sampled, rec, rec))  # 0/1 per record
        byts.append(Stratum(population, sampled, byt, byt_sq))
    return records, byts
