"""Where each copied record goes, and the partitioner that decides it.

Hashed keys go where the producers' partitioner puts them at the destination's
count; unhashed ones (null keys) go round-robin over the source partition's
share of the destination (:func:`unhashed_share`), so no two tasks ever write
the same records into one partition.  Pure, apart from :func:`choose_partitioner`,
which reads every key through Spark as ``analyze`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from migcheck.analysis.aggregate import KeyStats, score_partitioners
from migcheck.analysis.figures import figure_spec
from migcheck.analysis.verdicts import PartitionerScore, choose_placement, placed_alike
from migcheck.copy.checkpoint import Checkpoint
from migcheck.copy.errors import CheckpointError, PlacementError
from migcheck.copy.held import reader
from migcheck.copy.rounds import CHUNK
from migcheck.hashing.partitioners import (
    AUTO_CANDIDATES,
    UNHASHED,
    Keys,
    partition_array,
)
from migcheck.kafka.config import ClientConfig
from migcheck.kafka.fetch import WorkUnit
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.analyze import KeyLayout
from migcheck.model.partitioner import PartitionerChoice

if TYPE_CHECKING:
    from migcheck.analysis.scan.tasks import Reader


def unhashed_share(partition: int, partitions: int, into_partitions: int) -> list[int]:
    """The destination partitions that source ``partition``'s unhashed records (null keys)
    go round-robin over: those equal to it modulo the source's count.

    When the destination is at least as wide, no two tasks then write an unhashed
    record to the same partition, and hashed keys never share one across tasks (each
    key sits in one source partition), so whatever a task finds of its own records
    in a partition it writes to was written by it (see :mod:`migcheck.copy.task`).
    Narrower, each task takes one partition, shared.
    """
    return list(range(partition, into_partitions, partitions)) or [partition % into_partitions]


def targets(
    keys: Keys,
    partitioner: str,
    share: list[int],
    into_partitions: int,
    rr: int,
) -> tuple[list[int], int, int]:
    """Each key's destination partition, the next round-robin position and the number of
    unhashed keys; unhashed keys round-robin from ``rr`` over ``share``, in their order."""
    placed = partition_array(keys, into_partitions, partitioner)
    unhashed = placed == UNHASHED
    nulls = int(unhashed.sum())
    if nulls:
        placed[unhashed] = np.asarray(share)[(rr + np.arange(nulls)) % len(share)]
    return placed.tolist(), rr + nulls, nulls


def choose_partitioner(
    requested: PartitionerChoice,
    checkpoint_path: str | None,
    saved: Checkpoint | None,
    source: TopicMeta,
    read_stats: Any,  # (units, names) -> KeyStats | None: every key read and scored
    check: bool = False,
    placed_by: PlacedBy | None = None,
) -> str:
    """The partitioner this run places keys with, decided before anything is written.

    A later run keeps the checkpoint's partitioner: another one would put a key's
    new records away from its history, so it is refused.  Otherwise the choice is
    ``analyze``'s (:func:`~migcheck.analysis.verdicts.choose_placement`) over every
    key read, never a sample: a key placed by no hash may sit in several source
    partitions, and then neither its placement nor its order can be kept.  A forced
    ``--partitioner`` is used as given, unless ``check`` (``--check-placement``): then
    every keyed record read (since the checkpoint, if any) must sit where it places it,
    or the copy is refused before it writes; the read is held for the copy, so nothing
    is read twice.  That is how a runbook's state move proves, when it runs, the
    partitioner it proved when it was written.  With ``auto``, a later run checks that
    the records that arrived since were placed by the checkpoint's partitioner too.
    """
    pinned = saved.partitioner if saved else None
    if pinned and requested not in (PartitionerChoice.AUTO, pinned):
        raise CheckpointError(
            f"--checkpoint {checkpoint_path} placed keys with {pinned}: a later run must use "
            f"the same partitioner, or a key's new records land away from its history"
        )
    if requested != PartitionerChoice.AUTO:
        if check:
            detect_partitioner(
                source, read_stats, saved.next if saved else {}, requested, placed_by
            )
        return requested
    found = detect_partitioner(source, read_stats, saved.next if saved else {}, pinned)
    # no keyed record: nothing is placed by hash, all go round-robin
    return found or pinned or PartitionerChoice.MURMUR2


#: Whether every keyed record of the units sits where the partitioner named places it:
#: a forced partitioner's proof, a record at a time (:func:`spark_records_placed`).
PlacedBy = Callable[[list[WorkUnit], str], bool]


def detect_partitioner(
    source: TopicMeta,
    read_stats: Any,  # (units, names) -> KeyStats | None: every key read and scored
    start: Mapping[int, int] | None = None,
    pinned: str | None = None,
    placed_by: PlacedBy | None = None,
) -> str | None:
    """The partitioner that placed every keyed record of ``source`` from ``start`` (each
    partition's offset; its log start where none), read whole, never sampled
    (:func:`placed_every_key`: refused where none did); None where no record there has a
    key.  ``copy``'s choice, and ``runbook --strategy move-state``'s proof at generation
    that each changelog can move.  A ``pinned`` one that ``placed_by`` finds placed every
    keyed record is proven without scoring; otherwise the scoring says how far it is off."""
    start = start or {}
    ranges = {
        p.partition: (max(start.get(p.partition, 0), p.log_start_offset), p.log_end_offset)
        for p in source.partitions
    }
    units = [WorkUnit(source.name, p, a, b) for p, (a, b) in ranges.items() if a < b]
    if pinned and placed_by and (not units or placed_by(units, pinned)):
        return pinned
    names = [pinned] if pinned else list(AUTO_CANDIDATES)
    stats = read_stats(units, names) if units else None
    since = any(start.get(p.partition, 0) > p.log_start_offset for p in source.partitions)
    return None if stats is None else placed_every_key(source, stats, pinned, since)


def placed_every_key(
    source: TopicMeta, stats: KeyStats, pinned: str | None, since: bool = False
) -> str:
    """``pinned`` if it placed every key read, else the first of ``analyze``'s choices
    that did; a refusal when none did, or when several did and would place some key
    differently at the destination's count (``stats.splits``).  ``since``: the read
    began after the log's start (a checkpoint's), as the refusal says."""
    topic = source.name
    scores = stats.scores[KeyLayout.PLAIN]
    if pinned is not None:
        score = scores[pinned]
        if score.hashed == 0 or score.placed_every_key:
            return pinned
        raise PlacementError(
            f"the keyed records of {topic}{' that arrived since the last copy' if since else ''}"
            f" are not all placed by {pinned} ({_percent(score)} of keys are)",
            f"find its producers' partitioner with migcheck analyze --topic {topic} --full; "
            f"to copy them anyway, pass --partitioner {pinned} without --check-placement",
        )
    name, layout = choose_placement(PartitionerChoice.AUTO, stats.scores)
    alike = placed_alike(stats.scores.get(layout, {}), name)
    if alike and any(stats.splits.values()):
        raise _tie_error(source, [str(name), *alike], stats.splits)
    if name is None:
        best = max(scores, key=lambda n: scores[n].conformance or 0.0)
        raise PlacementError(
            f"no known partitioner placed every key of {topic} (best: {best}, "
            f"{_percent(scores[best])} of keys)",
            "a custom partitioner or explicit partitions? Force one with --partitioner",
        )
    return name


def _tie_error(source: TopicMeta, names: Sequence[str], splits: dict[int, int]) -> PlacementError:
    """The refusal of a tie that matters: the partitioners that placed every key would
    put some keys on different partitions of the destination."""
    if source.partition_count == 1:
        return PlacementError(
            f"{source.name} has one partition, so every key sits in partition 0 whatever "
            "the producers' partitioner, and its keys cannot tell which one they use",
            "pass theirs with --partitioner",
        )
    into, keys = max(splits.items(), key=lambda item: item[1])
    return PlacementError(
        f"{' and '.join(names)} each placed every key of {source.name} but put {keys:,} "
        f"keys on different partitions at {into} partitions, so the keys cannot tell "
        "which partitioner the producers use",
        "pass theirs with --partitioner",
    )


def _percent(score: PartitionerScore) -> str:
    return f"{100 * (score.conformance or 0.0):.1f}%"


def spark_key_stats(
    spark: Any,
    client: ClientConfig,
    source: TopicMeta,
    units: list[WorkUnit],
    names: list[str],
    into_partitions: int,
    held: str | None = None,
) -> KeyStats | None:
    """Partitioner scores of every key in ``units``, read and scored as ``analyze --full``
    does (histories grouped, hashed and turned into figures by the read tasks: a history
    row each would cross into Spark's JVM, be cached, and cross back to be scored), with
    the splits of tied partitioners at the destination's count; None when there is no
    keyed record.  With
    ``held`` (a copy's run), the read tasks hold the records for the copy
    (:mod:`migcheck.copy.held`): one read serves both."""
    from migcheck.analysis.scan.chunks import FullScan

    scored = [(KeyLayout.PLAIN, name) for name in names]
    spec = figure_spec([source], scored, [into_partitions], 0)
    read, grain = _read(held, units)
    scored_by, _ = FullScan(client, units, spec, figures=True, reader=read, grain=grain).load(spark)
    try:
        return score_partitioners(scored_by).get(source.name)
    finally:
        scored_by.release()


_PLACED_DDL = "keyed long, misplaced long"


def spark_records_placed(
    spark: Any,
    client: ClientConfig,
    source: TopicMeta,
    units: list[WorkUnit],
    name: str,
    held: str | None = None,
) -> bool:
    """Whether every keyed record of ``units`` sits on the partition ``name`` places its
    key at among the source's partitions: a forced partitioner's proof
    (``--check-placement``), a record at a time, grouping no key's history.  A key on two
    partitions has a record off its place, so this is what the scoring proves of one
    partitioner; it took 8 s where the scoring took 20 s of a 5 M-record move
    (docs/benchmarks.md).  With ``held`` (a copy's run), the read holds the copy's
    chunks as the scoring's does."""
    from migcheck.analysis.scan.tasks import RECORDS_PER_TASK, read_tasks
    from migcheck.analysis.session import task_slots
    from migcheck.kafka.fetch import pack_spans, records_in, task_count

    count = source.partition_count
    read, grain = _read(held, units)
    tasks = task_count(records_in(units), task_slots(spark), RECORDS_PER_TASK)
    spans = pack_spans(units, tasks, grain)

    def group(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keyed = misplaced = 0
        for batch in batches:
            placed = partition_array(batch.column("key"), count, name)
            hashed = placed >= 0
            keyed += int(hashed.sum())
            misplaced += int((hashed & (placed != batch.column("partition").to_numpy())).sum())
        yield pa.RecordBatch.from_arrays(
            [pa.array([keyed], pa.int64()), pa.array([misplaced], pa.int64())],
            ["keyed", "misplaced"],
        )

    rows, _ = read_tasks(spark, client, spans, group, _PLACED_DDL, every_record=True, reader=read)
    return sum(int(r["misplaced"]) for r in rows.collect()) == 0


def _read(held: str | None, units: list[WorkUnit]) -> tuple[Reader, int]:
    """A detection read's tasks' reader, and the grain their cuts fall on: with ``held``
    (a copy's run), the reader that holds each of the copy's chunks and cuts on them,
    so that each is one task's, whole; else the plain read, cut anywhere."""
    from migcheck.kafka.fetch import read_units

    return (reader(held, units), CHUNK) if held else (read_units, 1)
