"""Aggregation: from key histories to plain per-topic counts of what moves.

Every number comes from the histories' figures (:mod:`migcheck.analysis.figures`):
sums over history rows for every scored partitioner and proposed count, computed by
the read tasks that hold whole partitions, by the driver for a small read, or by
Spark's Python tasks over histories Spark holds (merged partials, a key export).
What follows them (the partitioner choice, the report entries, the verdicts) is a
pure function of plain Python data, tested without Spark.

Key facts that shape the numbers:

- A key's *current* partition is where its records are (observed), never what
  we compute.  A key moves under candidate ``m`` when ``placement % m``
  differs from its observed partition.  Only conforming keys are predicted.
- Compacted topics (changelogs) hold *live* state: the latest record per key,
  with tombstoned keys dropped.  Delete-policy topics count every record.
- A key's *layout* says which of its bytes were hashed.  A window or session
  store's changelog key is the source key plus a fixed-size suffix, and the
  record sits where the source key's hash put it; so placement is computed on
  the key without the suffix (stripped in Spark SQL, hashed by the same UDF),
  while the key's identity (what compaction keeps, what counts as one key) stays
  the whole key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from migcheck.analysis.figures import (
    FIGURES_DDL,
    Figures,
    FigureSource,
    Spec,
    TopicFigures,
    figures_of_batches,
    from_rows,
)
from migcheck.analysis.histories import Scored, placement_name
from migcheck.analysis.sources import spark_distinct_keys
from migcheck.analysis.verdicts import (
    KEY_SUFFIX,
    PartitionerScore,
    Share,
    choose_placement,
    mixed_shares,
    placed_alike,
    placing,
)
from migcheck.hashing.partitioners import AUTO_CANDIDATES
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout


@dataclass(frozen=True)
class KeyStats:
    """One topic's keyed records: distinct keys, their frequencies and partitioner scores."""

    distinct_keys: int
    singletons: int  # keys seen once
    doubletons: int  # keys seen twice
    #: per key layout, then per partitioner, each in the order scored (= preference)
    scores: dict[KeyLayout, dict[str, PartitionerScore]]
    #: per key layout, per pair of partitioners (``auto`` only): the keys either placed
    either: dict[KeyLayout, dict[tuple[str, str], int]] = field(default_factory=dict)
    #: per count asked of :func:`score_partitioners` (``copy``: the destination's), the
    #: most keys the first partitioner that placed every key and another one that did
    #: put on different partitions there; empty when no other one placed every key
    splits: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """State keys of one candidate going from observed ``partition`` to ``new``."""

    m: int
    partition: int
    new: int
    keys: int
    records: int
    bytes: int
    bytes_sq: float

    @property
    def moved(self) -> bool:
        return self.new != self.partition


@dataclass(frozen=True)
class SampledKey:
    """A moved key of the stable (mmh3-ranked) sample; ``rank`` 1 is the lowest hash."""

    m: int
    key: bytes
    partition: int
    new: int
    rank: int


@dataclass(frozen=True)
class TopicAggregates:
    """Everything the report needs from the records of one topic."""

    scanned: dict[int, int] = field(default_factory=dict)  # partition -> records read
    null_keys: int = 0
    key_stats: KeyStats | None = None  # None: no keyed record at all
    partitioner: str | None = None  # the one the prediction uses
    key_layout: KeyLayout = KeyLayout.PLAIN  # the layout it hashes keys by
    layouts: tuple[KeyLayout, ...] = (KeyLayout.PLAIN,)  # the layouts that were allowed
    non_conforming_keys: int = 0
    non_conforming_records: int = 0
    cells: tuple[Cell, ...] = ()
    samples: tuple[SampledKey, ...] = ()
    #: other partitioners that placed every key as the chosen one (or, refused, as the
    #: first that did), and the keys they place differently per proposed count
    placed_alike: tuple[str, ...] = ()
    splits: dict[int, int] = field(default_factory=dict)
    mixed: tuple[Share, ...] = ()  # two clients wrote the topic: each one's share


def aggregate(
    records: Any,  # RECORD_SCHEMA or HISTORY_SCHEMA rows (a DataFrame), or a FigureSource
    topics: Sequence[TopicMeta],
    candidates: Sequence[int],
    partitioner: str = "auto",
    moved_key_sample: int = 10,
    key_layouts: Sequence[KeyLayout] = (KeyLayout.PLAIN,),
) -> tuple[dict[str, TopicAggregates], Any]:
    """Aggregate ``records`` per topic; return them and the DataFrame of every moved key
    (None when ``records`` are a :class:`~migcheck.analysis.figures.FigureSource`, which
    keeps no row per key).

    Every allowed key layout is scored with every partitioner scored, and each
    topic is predicted with the first pair that placed every key (see
    :func:`~migcheck.analysis.verdicts.choose_placement`).  The moved-keys
    DataFrame (topic, key_hex, partition, candidate_partitions, new_partition;
    the whole key) is lazy: the caller writes it out for ``--moved-keys-out``.
    """
    scored = scored_pairs(partitioner, key_layouts)
    spec = figure_spec(topics, scored, candidates, moved_key_sample)
    source = records
    if not isinstance(records, FigureSource):
        source = HistoryFigures(records, topics, scored)
    figures = source.figures(spec)  # Kafka is read once, here
    scores = _layered_scores(figures, scored, partitioner)
    chosen = {t.name: choose_placement(partitioner, scores.get(t.name)) for t in topics}
    unplaced = [t for t, (name, _) in chosen.items() if name is None and t in scores]
    alike = {
        topic: ties
        for topic, (name, layout) in chosen.items()
        if partitioner == "auto"
        and (ties := placed_alike(scores.get(topic, {}).get(layout, {}), name))
    }
    splits = {t: _splits(figures[t], chosen[t], ties, candidates) for t, ties in alike.items()}
    chosen = {
        topic: (None, layout) if any(splits.get(topic, {}).values()) else (name, layout)
        for topic, (name, layout) in chosen.items()
    }
    either = _either(figures, unplaced, spec) if partitioner == "auto" else {}
    stats = _key_stats(figures, scores, _distinct(figures, source), either)
    layouts = ordered_layouts(key_layouts)
    result = {
        t.name: replace(
            _topic_aggregates(
                figures.get(t.name, TopicFigures()), chosen[t.name], spec, stats.get(t.name)
            ),
            layouts=layouts,
            placed_alike=alike.get(t.name, ()),
            splits=splits.get(t.name, {}),
            mixed=_mixed(stats.get(t.name), chosen[t.name][1], splits.get(t.name)),
        )
        for t in topics
    }
    return result, source.moved_keys(chosen, candidates)


def figure_spec(
    topics: Sequence[TopicMeta], scored: Sequence[Scored], candidates: Sequence[int], sample: int
) -> Spec:
    """What the figures of ``topics`` are computed for."""
    metas = {t.name: (t.partition_count, t.compacted) for t in topics}
    return Spec(tuple(scored), tuple(int(m) for m in candidates), sample, metas)


def _topic_aggregates(
    f: TopicFigures, chosen: tuple[str | None, KeyLayout], spec: Spec, stats: KeyStats | None
) -> TopicAggregates:
    """One topic's aggregates from its figures, predicted with ``chosen``."""
    name, layout = chosen
    pair = (layout, name) if name is not None else None
    off = f.nonconforming.get(pair, [0, 0]) if pair else [0, 0]
    cells = [
        Cell(m, p, new, int(s[0]), int(s[1]), int(s[2]), float(s[3]))
        for m in spec.candidates
        for (p, new), s in sorted(f.cells.get((pair, m), {}).items())
    ] if pair else []  # fmt: skip
    samples = [
        SampledKey(m, key, p, new, i)
        for m in spec.candidates
        for i, (_, key, p, new) in enumerate(f.lowest.get((pair, m), []), 1)
    ] if pair else []  # fmt: skip
    return TopicAggregates(
        scanned=dict(sorted(f.scanned.items())),
        null_keys=f.null_keys,
        key_stats=stats,
        partitioner=name,
        key_layout=layout,
        non_conforming_keys=off[0],
        non_conforming_records=off[1],
        cells=tuple(cells),
        samples=tuple(samples),
    )


def ordered_layouts(key_layouts: Sequence[KeyLayout]) -> tuple[KeyLayout, ...]:
    """The allowed key layouts once each, in preference order: plain keys first, then by
    the suffix they strip."""
    return tuple(sorted(set(key_layouts), key=KEY_SUFFIX.__getitem__))


def scored_pairs(partitioner: str, key_layouts: Sequence[KeyLayout]) -> list[Scored]:
    """Every (key layout, partitioner) pair scored, in preference order: layouts as
    :func:`ordered_layouts`, then each partitioner in the order ``auto`` tries them."""
    names = list(AUTO_CANDIDATES) if partitioner == "auto" else [partitioner]
    return [(layout, name) for layout in ordered_layouts(key_layouts) for name in names]


def _key_histories(records: Any, topics: Sequence[TopicMeta], scored: list[Scored]) -> Any:
    """One row per (topic, observed partition, key): its history there
    (:data:`~migcheck.analysis.histories.HISTORY_SCHEMA`, rank included), hashed once
    per scored pair; cached, since every figure is computed from it.

    ``records`` are grouped here (a key export) unless Kafka's read tasks grouped them
    already (they come with ``n``, ranked and hashed: a sample's, or a full scan's
    merged partials).  The null key gets a row per partition too (its placements
    null): the records are grouped in one pass, so a topic is read once and its
    records are never cached, only their per-key histories.  The rank is hashed in the
    placements' pass (one Python worker pass over the keys), not later over the moved
    keys, once per candidate."""

    from migcheck.analysis.spark import placement_column, sample_rank_column

    keys = records if "n" in records.columns else _grouped(records)
    keys = keys.withColumn(
        "current", _per_topic({t.name: t.partition_count for t in topics}, "int")
    ).withColumn("compacted", _per_topic({t.name: t.compacted for t in topics}, "boolean"))
    for layout, name in scored:
        column = placement_name((layout, name))
        if column not in keys.columns:  # not hashed by a read task
            keys = keys.withColumn(column, placement_column("key", name, KEY_SUFFIX[layout]))
    if "rank" not in keys.columns:  # not ranked by a read task
        keys = keys.withColumn("rank", sample_rank_column("key"))
    # Spark's cache, not a local checkpoint (rows as the jobs read them, no columnar
    # encoding): the checkpoint gained about 1.4 s on the 5 M bench topic, within the
    # runs' noise, and failed 5 M distinct keys under a 512 MiB driver with two busy cores
    # (UNABLE_TO_ACQUIRE_MEMORY in the sums' hash aggregate: its rows filled the storage
    # memory that execution may not evict), where the cache, compressed, passes.
    return keys.cache()


def _grouped(records: Any) -> Any:
    """Records grouped into histories by Spark (a key export), the figures of
    :func:`~migcheck.analysis.histories.partition_histories`."""
    from pyspark.sql import functions as F

    size = F.col("key_size") + F.coalesce(F.col("value_size"), F.lit(0))
    return records.groupBy("topic", "partition", "key").agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(size.cast("long")).alias("bytes"),
        F.sum(size.cast("double") ** 2).alias("bytes_sq"),
        F.max_by(F.col("value_size").isNull(), F.col("offset")).alias("tombstoned"),
        F.max_by(size.cast("long"), F.col("offset")).alias("last_bytes"),
    )


def _per_topic(values: dict[str, Any], sql_type: str) -> Any:  # a pyspark Column
    """Each row's topic's value, as a literal map: a join with a table of topics made Spark
    start a Python worker (about a second) just to broadcast a few rows."""
    from pyspark.sql import functions as F

    pairs = [F.lit(x) for name, value in values.items() for x in (name, value)]
    return F.create_map(*pairs)[F.col("topic")].cast(sql_type)


def concurrently(*jobs: Callable[[], Any]) -> list[Any]:
    """Run independent Spark jobs from threads at once; their results in order.

    Each of the report's small jobs leaves the cores idle while the driver plans it
    and while its last single task runs; submitted together, Spark fills those gaps
    with the others' tasks.  An error in any is raised here; so is Ctrl-C, without
    waiting for the others (the CLI then stops Spark, which ends them).  A lone job runs
    in this thread."""
    if len(jobs) == 1:
        return [jobs[0]()]
    pool = ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="migcheck-job")
    try:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class HistoryFigures:
    """The figures of key histories Spark holds (:func:`_key_histories`): merged partials,
    a key export, the driver's read; computed by Python tasks with the read tasks' own
    function (:func:`~migcheck.analysis.figures.figures_of_batches`).  The histories
    stay cached for the distinct keys and the moved keys' rows."""

    def __init__(self, records: Any, topics: Sequence[TopicMeta], scored: list[Scored]) -> None:
        self.histories = _key_histories(records, topics, scored)

    def figures(self, spec: Spec) -> Figures:
        def task(batches: Iterator[Any]) -> Iterator[Any]:
            return figures_of_batches(batches, spec)

        rows = self.histories.mapInArrow(task, FIGURES_DDL).collect()
        return from_rows((r["figures"] for r in rows), spec.sample)

    def distinct_keys(self, topics: Sequence[str]) -> dict[str, int]:
        return spark_distinct_keys(self.histories, topics)

    def moved_keys(
        self, chosen: dict[str, tuple[str | None, KeyLayout]], candidates: Sequence[int]
    ) -> Any:
        keys = self.histories.where(self.histories["key"].isNotNull())
        by_candidate = _by_candidate(_state_keys(keys, chosen), candidates)
        moved = by_candidate.where(by_candidate["new"] != by_candidate["partition"])
        return _moved_keys_frame(moved)


def _distinct(figures: Figures, source: FigureSource) -> dict[str, int]:
    """Per topic with a keyed record: its distinct keys, counted from its rows when no key
    can be on two partitions, or else by the source (one more pass over the keys)."""
    keyed = {t: f for t, f in figures.items() if f.rows}
    unique = {t: f.rows for t, f in keyed.items() if f.unique_keys()}
    rest = [t for t in keyed if t not in unique]
    return {**unique, **(source.distinct_keys(rest) if rest else {})}


def _layered_scores(
    figures: Figures, scored: list[Scored], partitioner: str
) -> dict[str, dict[KeyLayout, dict[str, PartitionerScore]]]:
    """Per topic with a keyed record: the first key layout's scores, and the other
    layouts' only when no partitioner placed the topic under the first.

    The prediction takes the first layout under which a partitioner placed every key
    (:func:`~migcheck.analysis.verdicts.choose_placement`), and the report shows that
    layout's scores only."""
    out: dict[str, dict[KeyLayout, dict[str, PartitionerScore]]] = {}
    for topic, f in figures.items():
        if not f.rows:
            continue
        by_layout: dict[KeyLayout, dict[str, PartitionerScore]] = {}
        for layout, name in scored:
            by_layout.setdefault(layout, {})[name] = PartitionerScore(*f.scores[layout, name])
        first = scored[0][0]
        placed = placing(partitioner, by_layout[first]) is not None
        out[topic] = {first: by_layout[first]} if placed else by_layout
    return out


def _key_stats(
    figures: Figures,
    scores: dict[str, dict[KeyLayout, dict[str, PartitionerScore]]],
    distinct: dict[str, int],
    either: dict[str, dict[KeyLayout, dict[tuple[str, str], int]]] | None = None,
) -> dict[str, KeyStats]:
    return {
        topic: KeyStats(
            count,
            figures[topic].f1,
            figures[topic].f2,
            scores[topic],
            (either or {}).get(topic, {}),
        )
        for topic, count in distinct.items()
    }


def _either(
    figures: Figures, topics: Sequence[str], spec: Spec
) -> dict[str, dict[KeyLayout, dict[tuple[str, str], int]]]:
    """Per topic of ``topics`` (no partitioner placed them alone: two clients may have
    written them, see :func:`_mixed`), per layout, per pair of partitioners: the keys
    either one placed where they are."""
    out: dict[str, dict[KeyLayout, dict[tuple[str, str], int]]] = {}
    for topic in topics:
        for a, b in spec.pairs():
            count = figures[topic].either[a, b]
            out.setdefault(topic, {}).setdefault(a[0], {})[a[1], b[1]] = count
    return out


def _mixed(
    stats: KeyStats | None, layout: KeyLayout, splits: dict[int, int] | None
) -> tuple[Share, ...]:
    """Each client's share when two wrote the topic (see
    :func:`~migcheck.analysis.verdicts.mixed_shares`); empty otherwise."""
    if stats is None or splits:
        return ()
    return mixed_shares(stats.scores.get(layout, {}), stats.either.get(layout, {}))


def _splits(
    f: TopicFigures,
    chosen: tuple[str | None, KeyLayout],
    others: Sequence[str],
    counts: Sequence[int],
) -> dict[int, int]:
    """Per count of ``counts``: the most keys the chosen partitioner and any of ``others``
    (they placed every key alike) put on different partitions there.

    Zero everywhere: they move the same keys, and the prediction stands whichever
    placed the topic.  Otherwise the observed keys cannot say which one did."""
    name, layout = chosen
    out: dict[int, int] = {}
    for other in others:
        a, b = (layout, name), (layout, other)
        for m in counts:
            apart = f.splits.get((a, b, m), f.splits.get((b, a, m), 0))
            out[m] = max(out.get(m, 0), apart)
    return out


def score_partitioners(
    records: Any,  # pyspark DataFrame of RECORD_SCHEMA records, or of histories (n)
    topics: Sequence[TopicMeta],
    names: Sequence[str] = AUTO_CANDIDATES,
    counts: Sequence[int] = (),
) -> dict[str, KeyStats]:
    """Every (topic, partition, key) scored with ``names`` on plain keys, as :func:`aggregate`
    scores them, without the candidates: ``migcheck copy`` feeds the result to
    :func:`~migcheck.analysis.verdicts.choose_placement`, so it picks a partitioner
    exactly as ``analyze`` would, from every key rather than a sample.

    With ``counts``, where several partitioners placed every key, ``KeyStats.splits``
    says whether they would still place every key alike at those counts: a tie that
    changes nothing there (FNV-1a masked and unsigned at a power of two) is no reason
    to refuse the copy."""
    scored = [(KeyLayout.PLAIN, name) for name in names]
    source = HistoryFigures(records, topics, scored)
    try:
        figures = source.figures(figure_spec(topics, scored, counts, 0))
        scores = _layered_scores(figures, scored, "auto")
        stats = _key_stats(figures, scores, _distinct(figures, source))
        return {t: replace(s, splits=_tie_splits(figures[t], s, counts)) for t, s in stats.items()}
    finally:
        source.histories.unpersist()  # cached for aggregate()'s several jobs


def _tie_splits(f: TopicFigures, stats: KeyStats, counts: Sequence[int]) -> dict[int, int]:
    """The splits at ``counts`` of a topic that ``auto`` finds tied (empty otherwise)."""
    name, layout = choose_placement("auto", stats.scores)
    ties = placed_alike(stats.scores.get(layout, {}), name)
    return _splits(f, (name, layout), ties, counts) if ties and counts else {}


def _state_keys(keys: Any, chosen: dict[str, tuple[str | None, KeyLayout]]) -> Any:
    """The predictable state keys (hashed, conforming, live when compacted), lazy."""
    from pyspark.sql import functions as F

    v_expr = F.lit(None).cast("long")
    for topic, (name, layout) in chosen.items():
        if name is not None:
            v = F.col(placement_name((layout, name)))
            v_expr = F.when(F.col("topic") == topic, v).otherwise(v_expr)
    keys_v = keys.withColumn("v", v_expr).where(F.col("v").isNotNull())
    fits = (F.col("v") % F.col("current")) == F.col("partition")
    live = F.col("compacted")
    return (
        keys_v.where(fits)
        .where(~(live & F.col("tombstoned")))
        .select("topic", "partition", "key", "v")
    )


def _by_candidate(state: Any, candidates: Sequence[int]) -> Any:
    """Each state key once per candidate count ``m``, with its ``new`` partition there."""
    from pyspark.sql import functions as F

    return state.withColumn(
        "m", F.explode(F.array(*[F.lit(int(m)) for m in candidates]))
    ).withColumn("new", (F.col("v") % F.col("m")).cast("int"))


def _moved_keys_frame(moved: Any) -> Any:
    from pyspark.sql import functions as F

    return moved.select(
        "topic",
        F.lower(F.hex("key")).alias("key_hex"),
        "partition",
        F.col("m").alias("candidate_partitions"),
        F.col("new").alias("new_partition"),
    )
