"""Aggregation on Spark: from records to plain per-topic counts of what moves.

The Spark part is declarative (group, hash once per key, count).  Its result,
:class:`TopicAggregates`, is plain Python data, so everything after it (the
partitioner choice, the report entries, the verdicts) is a pure function
tested without Spark.

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

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from migcheck.analysis.histories import Scored, placement_name
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
    records: Any,  # pyspark DataFrame of RECORD_SCHEMA records, or of HISTORY_SCHEMA histories
    topics: Sequence[TopicMeta],
    candidates: Sequence[int],
    partitioner: str = "auto",
    moved_key_sample: int = 10,
    key_layouts: Sequence[KeyLayout] = (KeyLayout.PLAIN,),
) -> tuple[dict[str, TopicAggregates], Any]:
    """Aggregate ``records`` per topic; return them and the DataFrame of every moved key.

    Every allowed key layout is scored with every partitioner scored, and each
    topic is predicted with the first pair that placed every key (see
    :func:`~migcheck.analysis.verdicts.choose_placement`).  The moved-keys
    DataFrame (topic, key_hex, partition, candidate_partitions, new_partition;
    the whole key) is lazy: the caller writes it out for ``--moved-keys-out``.
    """
    layouts = ordered_layouts(key_layouts)
    scored = scored_pairs(partitioner, key_layouts)
    histories = _key_histories(records, topics, scored)  # Kafka is read once, here
    keys = histories.where(histories["key"].isNotNull())
    (per_partition, sums), distinct = concurrently(  # the distinct keys need no choice
        lambda: _layered_sums(histories, scored, partitioner), lambda: _distinct_keys(keys)
    )
    scores = _topic_scores(sums, scored)
    chosen = {t.name: choose_placement(partitioner, scores.get(t.name)) for t in topics}
    pairs = _pairs(scored) if partitioner == "auto" else []
    unplaced = [t for t, (name, _) in chosen.items() if name is None and t in scores]
    alike = {
        topic: ties
        for topic, (name, layout) in chosen.items()
        if partitioner == "auto"
        and (ties := placed_alike(scores.get(topic, {}).get(layout, {}), name))
    }
    splits = _splits(keys, chosen, alike, candidates) if alike else {}
    chosen = {
        topic: (None, layout) if any(splits.get(topic, {}).values()) else (name, layout)
        for topic, (name, layout) in chosen.items()
    }
    state, nonconforming_keys = _state_keys(keys, chosen)
    by_candidate = _by_candidate(state, candidates)
    moved = by_candidate.where(by_candidate["new"] != by_candidate["partition"])
    nonconforming, cells, samples, either = concurrently(
        lambda: _nonconforming(nonconforming_keys),
        lambda: _cells(by_candidate),
        lambda: _moved_sample(moved, moved_key_sample),
        lambda: _either(histories, unplaced, pairs),
    )
    stats = _key_stats(sums, scores, distinct, either)
    result = {}
    for t in topics:
        scanned, null_keys = per_partition.get(t.name, ({}, 0))
        non_conforming_keys, non_conforming_records = nonconforming.get(t.name, (0, 0))
        result[t.name] = TopicAggregates(
            scanned=scanned,
            null_keys=null_keys,
            key_stats=stats.get(t.name),
            partitioner=chosen[t.name][0],
            key_layout=chosen[t.name][1],
            layouts=layouts,
            non_conforming_keys=non_conforming_keys,
            non_conforming_records=non_conforming_records,
            cells=tuple(c for name, c in cells if name == t.name),
            samples=tuple(s for name, s in samples if name == t.name),
            placed_alike=alike.get(t.name, ()),
            splits=splits.get(t.name, {}),
            mixed=_mixed(stats.get(t.name), chosen[t.name][1], splits.get(t.name)),
        )
    return result, _moved_keys_frame(moved)


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


PerPartition = dict[str, tuple[dict[int, int], int]]


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


Pair = tuple[Scored, Scored]


def _pairs(scored: list[Scored]) -> list[Pair]:
    """Every two partitioners scored under one key layout, in preference order: ``auto``
    asks whether two clients together placed a topic's keys."""
    return [(a, b) for i, a in enumerate(scored) for b in scored[i + 1 :] if a[0] == b[0]]


def _either_name(pair: Pair) -> str:
    return f"either_{placement_name(pair[0])}_{placement_name(pair[1])}"


def _partition_sums(
    histories: Any, scored: list[Scored]
) -> tuple[PerPartition, dict[str, dict[str, int]]]:
    """One job of sums per partition (the null key's row holds its null-key records):
    per topic ({partition: records read}, null-key records), and the topic's totals of
    every sum: records, null keys, keys seen once and twice, each partitioner's
    conformance.

    Distinct keys are a job of their own: Spark's countDistinct beside these sums
    doubled every row (its Expand) and shuffled them twice."""
    from pyspark.sql import functions as F

    aggs = [F.expr(text) for text in _sums_sql(scored)]
    per_partition: PerPartition = {}
    sums: dict[str, dict[str, int]] = {}
    for r in histories.groupBy("topic", "partition").agg(*aggs).collect():
        scanned, nulls = per_partition.get(r["topic"], ({}, 0))
        scanned[r["partition"]] = r["records"]
        per_partition[r["topic"]] = (scanned, nulls + r["null_keys"])
        total = sums.setdefault(r["topic"], {})
        for name, value in r.asDict().items():
            if name not in ("topic", "partition"):
                total[name] = total.get(name, 0) + int(value)
    return per_partition, sums


def _fits(pair: Scored) -> str:
    """Whether the pair places the row's key where it is, in Spark SQL; null for the
    null key, whose placements are null."""
    return f"`{placement_name(pair)}` % current = partition"


def _sums_sql(scored: list[Scored]) -> list[str]:
    """The sums of :func:`_partition_sums` as Spark SQL, one text per sum.

    Text, not Column calls: each Column operator is a call into the JVM, and the
    sums of ``auto`` (then every partitioner and every pair of them, now in
    :func:`_either`) took about a thousand of them, 1.1 s of the driver's time in a
    profile, before the job could start; a text is one."""
    texts = [
        "sum(n) AS records",
        "sum(CASE WHEN key IS NULL THEN n ELSE 0 END) AS null_keys",
        "sum(CAST(key IS NOT NULL AND n = 1 AS BIGINT)) AS f1",
        "sum(CAST(key IS NOT NULL AND n = 2 AS BIGINT)) AS f2",
    ]
    return texts + [text for pair in scored for text in _score_sql(pair)]


def _score_sql(pair: Scored) -> list[str]:
    """One pair's score as Spark SQL sums: keys hashed, conforming, and the keyed records
    it could not hash."""
    col = placement_name(pair)
    unhashed = f"CASE WHEN key IS NOT NULL AND `{col}` IS NULL THEN n ELSE 0 END"
    return [
        f"count(`{col}`) AS `hashed_{col}`",  # the null key's placement is null
        f"coalesce(sum(CAST({_fits(pair)} AS BIGINT)), 0) AS `conform_{col}`",
        f"sum({unhashed}) AS `unhashed_{col}`",
    ]


def _layered_sums(
    histories: Any, scored: list[Scored], partitioner: str
) -> tuple[PerPartition, dict[str, dict[str, int]]]:
    """:func:`_partition_sums` with the first key layout's pairs only, then the other
    layouts' scores for the topics no partitioner placed under it (one more job).

    The prediction takes the first layout under which a partitioner placed every key
    (:func:`~migcheck.analysis.verdicts.choose_placement`), and the report shows that
    layout's scores only; so a topic placed on plain keys never needs its window and
    session scores.  ``app --state`` allows all three for changelogs: scoring them at
    once made a job of 67 sums where 25 answer the usual app, and a cold JVM compiles
    each."""
    first = [pair for pair in scored if pair[0] == scored[0][0]]
    per_partition, sums = _partition_sums(histories, first)
    rest = scored[len(first) :]
    scores = _topic_scores(sums, first)
    unplaced = [t for t, s in scores.items() if placing(partitioner, s[scored[0][0]]) is None]
    if rest and unplaced:
        for topic, extra in _topic_sums(histories, unplaced, rest).items():
            sums[topic].update(extra)
    return per_partition, sums


def _topic_sums(
    histories: Any, topics: Sequence[str], scored: list[Scored]
) -> dict[str, dict[str, int]]:
    """Per topic of ``topics``, the scores' sums of ``scored`` (one job)."""
    texts = [text for pair in scored for text in _score_sql(pair)]
    return _sums_of(histories, topics, texts)


def _sums_of(histories: Any, topics: Sequence[str], texts: list[str]) -> dict[str, dict[str, int]]:
    """Per topic of ``topics``, the Spark SQL sums ``texts`` over its histories (one job)."""
    from pyspark.sql import functions as F

    rows = (
        histories.where(F.col("topic").isin(list(topics)))
        .groupBy("topic")
        .agg(*(F.expr(text) for text in texts))
        .collect()
    )
    return {
        r["topic"]: {k: int(v or 0) for k, v in r.asDict().items() if k != "topic"} for r in rows
    }


def _topic_scores(
    sums: dict[str, dict[str, int]], scored: list[Scored]
) -> dict[str, dict[KeyLayout, dict[str, PartitionerScore]]]:
    """Every summed pair's score per topic that has a keyed record (the others have none);
    a later key layout's pairs are summed only where :func:`_layered_sums` needed them."""
    return {
        topic: _scores(total, [p for p in scored if f"hashed_{placement_name(p)}" in total])
        for topic, total in sums.items()
        if total["records"] > total["null_keys"]
    }


def _key_stats(
    sums: dict[str, dict[str, int]],
    scores: dict[str, dict[KeyLayout, dict[str, PartitionerScore]]],
    distinct: dict[str, int],
    either: dict[str, dict[KeyLayout, dict[tuple[str, str], int]]] | None = None,
) -> dict[str, KeyStats]:
    return {
        topic: KeyStats(
            count,
            sums[topic]["f1"],
            sums[topic]["f2"],
            scores[topic],
            (either or {}).get(topic, {}),
        )
        for topic, count in distinct.items()
    }


def _either(
    histories: Any, topics: Sequence[str], pairs: Sequence[Pair]
) -> dict[str, dict[KeyLayout, dict[tuple[str, str], int]]]:
    """Per topic of ``topics``, per layout, per pair of partitioners: the keys either one
    placed where they are, in one job, run only for topics no partitioner placed alone
    (two clients may have written them, see :func:`_mixed`).

    Not among the first job's sums: ``auto``'s pairs outnumber its partitioners (for
    ``app --state``'s changelogs, three layouts of them), and compiling them cost a
    1,000-record ``app --state`` about a second of its 7.5 s in a cold JVM, for a
    figure a topic placed by one partitioner never shows."""
    if not topics or not pairs:
        return {}
    texts = [
        f"sum(CAST(coalesce({_fits(a)}, false) OR coalesce({_fits(b)}, false) AS BIGINT))"
        f" AS `{_either_name((a, b))}`"
        for a, b in pairs
    ]
    out: dict[str, dict[KeyLayout, dict[tuple[str, str], int]]] = {}
    for topic, sums in _sums_of(histories, topics, texts).items():
        for a, b in pairs:
            out.setdefault(topic, {}).setdefault(a[0], {})[a[1], b[1]] = sums[_either_name((a, b))]
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
    keys: Any,
    chosen: dict[str, tuple[str | None, KeyLayout]],
    alike: dict[str, tuple[str, ...]],
    candidates: Sequence[int],
) -> dict[str, dict[int, int]]:
    """Per topic whose keys several partitioners placed alike: per proposed count, the
    most keys the chosen one and any other put on different partitions there (one job).

    Zero everywhere: they move the same keys, and the prediction stands whichever
    placed the topic.  Otherwise the observed keys cannot say which one did."""
    from pyspark.sql import functions as F

    aggs, names = [], []
    for topic, others in alike.items():
        name, layout = chosen[topic]
        assert name is not None  # placed_alike is empty without a choice
        v = F.col(placement_name((layout, name)))
        for other in others:
            w = F.col(placement_name((layout, other)))
            for m in candidates:
                differs = (F.col("topic") == topic) & ((v % m) != (w % m))
                aggs.append(F.sum(F.coalesce(differs, F.lit(False)).cast("long")))
                names.append((topic, m))
    row = keys.agg(*aggs).collect()[0]
    out: dict[str, dict[int, int]] = {}
    for (topic, m), value in zip(names, row, strict=True):
        by_m = out.setdefault(topic, {})
        by_m[m] = max(by_m.get(m, 0), int(value or 0))
    return out


def _distinct_keys(keys: Any) -> dict[str, int]:
    """Per topic with a keyed record: its distinct keys (a key seen in two partitions
    counts once)."""
    rows = keys.select("topic", "key").distinct().groupBy("topic").count().collect()
    return {r["topic"]: int(r["count"]) for r in rows}


def _scores(
    row: dict[str, int], scored: list[Scored]
) -> dict[KeyLayout, dict[str, PartitionerScore]]:
    out: dict[KeyLayout, dict[str, PartitionerScore]] = {}
    for layout, name in scored:
        col = placement_name((layout, name))
        out.setdefault(layout, {})[name] = PartitionerScore(
            int(row[f"hashed_{col}"]), int(row[f"conform_{col}"]), int(row[f"unhashed_{col}"])
        )
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
    histories = _key_histories(records, topics, scored)
    try:
        _, sums = _partition_sums(histories, scored)
        keys = histories.where(histories["key"].isNotNull())
        stats = _key_stats(sums, _topic_scores(sums, scored), _distinct_keys(keys))
        return _with_splits(stats, keys, counts) if counts else stats
    finally:
        histories.unpersist()  # cached for aggregate()'s several jobs; this is the only one


def _with_splits(
    stats: dict[str, KeyStats], keys: Any, counts: Sequence[int]
) -> dict[str, KeyStats]:
    """``stats`` with the splits at ``counts`` of each topic that ``auto`` finds tied."""
    chosen = {topic: choose_placement("auto", s.scores) for topic, s in stats.items()}
    alike = {
        topic: ties
        for topic, (name, layout) in chosen.items()
        if (ties := placed_alike(stats[topic].scores.get(layout, {}), name))
    }
    if not alike:
        return stats
    splits = _splits(keys, chosen, alike, counts)
    return {t: replace(s, splits=splits.get(t, {})) for t, s in stats.items()}


def _state_keys(keys: Any, chosen: dict[str, tuple[str | None, KeyLayout]]) -> tuple[Any, Any]:
    """The predictable state keys (hashed, conforming, live when compacted), and the
    hashed keys that do not conform (left out), both lazy."""
    from pyspark.sql import functions as F

    v_expr = F.lit(None).cast("long")
    for topic, (name, layout) in chosen.items():
        if name is not None:
            v = F.col(placement_name((layout, name)))
            v_expr = F.when(F.col("topic") == topic, v).otherwise(v_expr)
    keys_v = keys.withColumn("v", v_expr).where(F.col("v").isNotNull())
    fits = (F.col("v") % F.col("current")) == F.col("partition")
    live = F.col("compacted")
    state = (
        keys_v.where(fits)
        .where(~(live & F.col("tombstoned")))
        .select(
            "topic",
            "partition",
            "key",
            "v",
            "rank",
            F.when(live, F.lit(1)).otherwise(F.col("n")).alias("state_records"),
            F.when(live, F.col("last_bytes")).otherwise(F.col("bytes")).alias("state_bytes"),
            F.when(live, F.col("last_bytes").cast("double") ** 2)
            .otherwise(F.col("bytes_sq"))
            .alias("state_bytes_sq"),
        )
    )
    return state, keys_v.where(~fits)


def _nonconforming(keys: Any) -> dict[str, tuple[int, int]]:
    """Per topic, the (keys, records) that do not conform to the chosen placement."""
    from pyspark.sql import functions as F

    rows = (
        keys.groupBy("topic")
        .agg(F.count(F.lit(1)).alias("keys"), F.sum("n").alias("records"))
        .collect()
    )
    return {r["topic"]: (int(r["keys"]), int(r["records"])) for r in rows}


def _by_candidate(state: Any, candidates: Sequence[int]) -> Any:
    """Each state key once per candidate count ``m``, with its ``new`` partition there."""
    from pyspark.sql import functions as F

    return state.withColumn(
        "m", F.explode(F.array(*[F.lit(int(m)) for m in candidates]))
    ).withColumn("new", (F.col("v") % F.col("m")).cast("int"))


def _cells(by_candidate: Any) -> list[tuple[str, Cell]]:
    from pyspark.sql import functions as F

    rows = (
        by_candidate.groupBy("topic", "m", "partition", "new")
        .agg(
            F.count(F.lit(1)).alias("keys"),
            F.sum("state_records").alias("records"),
            F.sum("state_bytes").alias("bytes"),
            F.sum("state_bytes_sq").alias("bytes_sq"),
        )
        .collect()
    )
    return [
        (
            r["topic"],
            Cell(
                r["m"], r["partition"], r["new"], r["keys"], r["records"], r["bytes"], r["bytes_sq"]
            ),
        )
        for r in rows
    ]


def _moved_sample(moved: Any, size: int) -> list[tuple[str, SampledKey]]:
    """Per topic and candidate, the ``size`` moved keys of lowest mmh3 rank (then key):
    stable across runs.

    ``min_by`` with ``k`` keeps a bounded heap per group in each task, where a window's
    ``row_number`` sorted every moved key: the slowest of the report's jobs on a full
    scan."""
    if size <= 0:
        return []
    from pyspark.sql import functions as F

    fields = F.struct("rank", "key", "partition", "new")
    rows = (
        moved.groupBy("topic", "m")
        .agg(F.min_by(fields, F.struct("rank", "key"), size).alias("lowest"))
        .collect()
    )
    return [
        (r["topic"], SampledKey(r["m"], bytes(k["key"]), k["partition"], k["new"], i))
        for r in rows
        for i, k in enumerate(sorted(r["lowest"], key=lambda k: (k["rank"], k["key"])), 1)
    ]


def _moved_keys_frame(moved: Any) -> Any:
    from pyspark.sql import functions as F

    return moved.select(
        "topic",
        F.lower(F.hex("key")).alias("key_hex"),
        "partition",
        F.col("m").alias("candidate_partitions"),
        F.col("new").alias("new_partition"),
    )
