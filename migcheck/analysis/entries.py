"""Report entries from aggregates: pure functions, one topic and one candidate at a time.

The input is a topic's metadata and its :class:`TopicAggregates`; the output is
the topic's entry of the report (:class:`~migcheck.model.analyze.TopicEntry`).
In sample mode a key's movement depends on its hash alone, not on how often it
was written, so the keys a sample sees are a fair sample for the moved
fraction; totals are scaled per partition and carry 95% intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from migcheck.analysis.aggregate import Cell, SampledKey, TopicAggregates
from migcheck.analysis.statistics import (
    Stratum,
    distinct_estimate,
    distinct_range,
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
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import (
    CandidateEntry,
    KeyLayout,
    LoadEntry,
    MovedKey,
    PartitionEntry,
    State,
    TopicEntry,
    Verdict,
)


@dataclass(frozen=True)
class Scale:
    """How a topic's sample scales up: ``keys`` (estimate) and ``keys_hi`` (upper bound)
    multiply keys seen; ``offsets`` are each partition's (start, end)."""

    sampled: bool
    compacted: bool
    offsets: dict[int, tuple[int, int]]
    scanned: dict[int, int]
    keys: float = 1.0
    keys_hi: float = 1.0


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
    distinct, interval, scale = _distinct_keys(agg, scale, records_total)
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
        "distinct_keys": distinct,
        "distinct_keys_interval": interval,
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


def _distinct_keys(
    agg: TopicAggregates, scale: Scale, records_total: int
) -> tuple[int, list[int] | None, Scale]:
    """Distinct keys (exact, or an estimate within certain bounds when sampled), and the
    scale that takes the sample's key counts to the whole log."""
    stats = agg.key_stats
    seen = stats.distinct_keys if stats else 0
    if not (scale.sampled and stats):
        return seen, None, scale
    read = sum(agg.scanned.values())
    est = distinct_estimate(
        seen, stats.singletons, stats.doubletons, read - agg.null_keys, read / records_total
    )
    lo, hi = distinct_range(seen, records_total - read)
    return round(est), [lo, hi], replace(scale, keys=est / max(seen, 1), keys_hi=hi / max(seen, 1))


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
        "moved_fraction": moved_keys / state_keys if state_keys else 0.0,
        "moved_fraction_interval": None,
        "expected_moved_fraction": expected_moved_fraction(n, m),
        "moved_records": sum(c.records for c in moved),
        "moved_records_interval": None,
        "moved_bytes": sum(c.bytes for c in moved),
        "moved_bytes_interval": None,
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
        cand["matrix"] = [[0] * m for _ in range(n)]
        for (p, q), k in flows.items():
            cand["matrix"][p][q] = k
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
    """One candidate's sample counts as estimates with intervals.

    The moved fraction has a Wilson 95% interval.  Moved keys run from the moved
    keys actually seen (certain) to the fraction's upper bound times the upper
    bound on distinct keys.
    """
    lo, hi = wilson_interval(moved_keys, state_keys)
    keys = round(cand["moved_fraction"] * state_keys * scale.keys)
    keys_interval = [moved_keys, hi * state_keys * scale.keys_hi]
    out: dict[str, object] = {
        "moved_fraction_interval": [lo, hi],
        "moved_keys": keys,
        "moved_keys_interval": keys_interval,
    }
    if scale.compacted:
        # one live record per key: records follow keys, bytes follow the mean live size
        mean_bytes = cand["moved_bytes"] / moved_keys if moved_keys else 0.0
        out["moved_records"] = keys
        out["moved_records_interval"] = list(keys_interval)
        out["moved_bytes"] = round(keys * mean_bytes)
        out["moved_bytes_interval"] = [v * mean_bytes for v in keys_interval]
        return out
    records, byts = _moved_strata(cells, scale)
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
