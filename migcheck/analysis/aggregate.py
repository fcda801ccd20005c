"""Aggregation: from key histories to plain per-topic counts of what moves.

Every number comes from the histories' figures (:mod:`migcheck.analysis.figures`):
sums over history rows for every scored partitioner and proposed count, computed by
the read tasks that hold whole partitions, by the driver for a small read, or by
Spark's Python tasks over histories Spark holds (merged partials, a key export).
What follows them (the partitioner choice, the report entries, the verdicts) is a
pure function of plain Python data, tested without Spark: this module imports no
Spark-side module; its figures come from a :class:`~migcheck.analysis.figures.FigureSource`
of :mod:`migcheck.analysis.scan`.

Key facts that shape the numbers:

- A key's *current* partition is where its records are (observed), never what
  we compute.  A key moves under candidate ``m`` when ``placement % m``
  differs from its observed partition.  Only conforming keys are predicted.
- Compacted topics (changelogs) hold *live* state: the latest record per key,
  with tombstoned keys dropped.  Delete-policy topics count every record.
- A key's *layout* says which of its bytes were hashed.  A window or session
  store's changelog key is the source key plus a fixed-size suffix, and the
  record sits where the source key's hash put it; so placement is computed on
  the key without the suffix (stripped before hashing, by the same kernel),
  while the key's identity (what compaction keeps, what counts as one key) stays
  the whole key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from migcheck.analysis.figures import (
    Figures,
    FigureSource,
    MovedKeys,
    Spec,
    TopicFigures,
)
from migcheck.analysis.histories import Scored
from migcheck.analysis.verdicts import (
    PartitionerScore,
    Share,
    choose_placement,
    mixed_shares,
    placed_alike,
    placing,
)
from migcheck.model.analyze import KeyLayout
from migcheck.model.partitioner import PartitionerChoice


@dataclass(frozen=True)
class SampleFigures:
    """What a sample's windows read of a topic's keys (:class:`TopicFigures`' ``freq``,
    ``masks`` and ``spread``): the distinct keys' estimate and the drift check."""

    freq: dict[tuple[int, int], int] = field(default_factory=dict)
    masks: dict[int, int] = field(default_factory=dict)
    spread: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class KeyStats:
    """One topic's keyed records: distinct keys, partitioner scores, and the sample's
    figures of them."""

    distinct_keys: int
    #: per key layout, then per partitioner, each in the order scored (= preference)
    scores: dict[KeyLayout, dict[str, PartitionerScore]]
    #: per key layout, per pair of partitioners (``auto`` only): the keys either placed
    either: dict[KeyLayout, dict[tuple[str, str], int]] = field(default_factory=dict)
    #: per count asked of :func:`score_partitioners` (``copy``: the destination's), the
    #: most keys the first partitioner that placed every key and another one that did
    #: put on different partitions there; empty when no other one placed every key
    splits: dict[int, int] = field(default_factory=dict)
    sample: SampleFigures = field(default_factory=SampleFigures)


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
    source: FigureSource, partitioner: PartitionerChoice = PartitionerChoice.AUTO
) -> tuple[dict[str, TopicAggregates], MovedKeys | None]:
    """Aggregate the figures of ``source`` per topic of its spec; return them and every
    moved key (None when the source keeps no row per key).

    Every allowed key layout is scored with every partitioner scored (the spec's pairs:
    :func:`~migcheck.analysis.histories.scored_pairs` of ``partitioner``), and each
    topic is predicted with the first pair that placed every key (see
    :func:`~migcheck.analysis.verdicts.choose_placement`).  The moved keys are the
    whole keys', computed when asked: ``--moved-keys-out`` writes them.
    """
    spec = source.spec
    scored, candidates, topics = list(spec.scored), spec.candidates, list(spec.topics)
    figures = source.figures()  # Kafka is read once, here
    scores = _layered_scores(figures, scored, partitioner)
    chosen = {t: choose_placement(partitioner, scores.get(t)) for t in topics}
    unplaced = [t for t, (name, _) in chosen.items() if name is None and t in scores]
    alike = {
        topic: ties
        for topic, (name, layout) in chosen.items()
        if partitioner == PartitionerChoice.AUTO
        and (ties := placed_alike(scores.get(topic, {}).get(layout, {}), name))
    }
    splits = {t: _splits(figures[t], chosen[t], ties, candidates) for t, ties in alike.items()}
    chosen = {
        topic: (None, layout) if any(splits.get(topic, {}).values()) else (name, layout)
        for topic, (name, layout) in chosen.items()
    }
    either = _either(figures, unplaced, spec) if partitioner == PartitionerChoice.AUTO else {}
    stats = _key_stats(figures, scores, _distinct(figures, source), either)
    layouts = tuple(dict.fromkeys(layout for layout, _ in scored))
    result = {
        t: replace(
            _topic_aggregates(figures.get(t, TopicFigures()), chosen[t], spec, stats.get(t)),
            layouts=layouts,
            placed_alike=alike.get(t, ()),
            splits=splits.get(t, {}),
            mixed=_mixed(stats.get(t), chosen[t][1], splits.get(t)),
        )
        for t in topics
    }
    return result, source.moved_keys(chosen)


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


def _distinct(figures: Figures, source: FigureSource) -> dict[str, int]:
    """Per topic with a keyed record: its distinct keys, counted from its rows when no key
    can be on two partitions, or else by the source (one more pass over the keys)."""
    keyed = {t: f for t, f in figures.items() if f.rows}
    unique = {t: f.rows for t, f in keyed.items() if f.unique_keys()}
    rest = [t for t in keyed if t not in unique]
    return {**unique, **(source.distinct_keys(rest) if rest else {})}


def _layered_scores(
    figures: Figures, scored: list[Scored], partitioner: PartitionerChoice
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
            scores[topic],
            (either or {}).get(topic, {}),
            sample=SampleFigures(figures[topic].freq, figures[topic].masks, figures[topic].spread),
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
            # name is not None here: placed_alike gives ties only beside a placed name.
            apart = f.splits.get((a, b, m), f.splits.get((b, a, m), 0))  # type: ignore[arg-type]
            out[m] = max(out.get(m, 0), apart)
    return out


def score_partitioners(source: FigureSource) -> dict[str, KeyStats]:
    """Every (topic, partition, key) of ``source`` scored with its spec's partitioners on
    plain keys, as :func:`aggregate` scores them, without the moved keys: ``migcheck
    copy`` feeds the result to :func:`~migcheck.analysis.verdicts.choose_placement`, so
    it picks a partitioner exactly as ``analyze`` would, from every key rather than a
    sample.

    With the spec's counts, where several partitioners placed every key,
    ``KeyStats.splits`` says whether they would still place every key alike at those
    counts: a tie that changes nothing there (FNV-1a masked and unsigned at a power of
    two) is no reason to refuse the copy."""
    figures = source.figures()
    scores = _layered_scores(figures, list(source.spec.scored), PartitionerChoice.AUTO)
    stats = _key_stats(figures, scores, _distinct(figures, source))
    counts = source.spec.candidates
    return {t: replace(s, splits=_tie_splits(figures[t], s, counts)) for t, s in stats.items()}


def _tie_splits(f: TopicFigures, stats: KeyStats, counts: Sequence[int]) -> dict[int, int]:
    """The splits at ``counts`` of a topic that ``auto`` finds tied (empty otherwise)."""
    name, layout = choose_placement(PartitionerChoice.AUTO, stats.scores)
    ties = placed_alike(stats.scores.get(layout, {}), name)
    return _splits(f, (name, layout), ties, counts) if ties and counts else {}
