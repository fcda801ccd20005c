"""The driver's rounds: which chunk each source partition copies next, the checkpoint
that records a round before it runs, and the one that settles it.

A round is one Spark job with one task per source partition that still has
records.  Before launching it, the driver records in the checkpoint each
partition's chunk (an offset range), its round-robin position and where every
destination partition ends; after the job it records the partitions past their
chunks.  A driver killed in between leaves the round recorded, and the next run
launches that very round again (:func:`run_rounds`), so its tasks settle it.
The decisions are pure; the loop gets its I/O (:class:`RoundIO`) from the caller,
so it is tested without a broker or Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from migcheck.copy.checkpoint import Checkpoint, Chunk, Round

#: Offsets per chunk: at most this many records per transaction, and per task in a round.
#: A round costs a Spark job and, per task, a producer's initialisation and a look at
#: the destination, so small chunks make a copy slow (docs/benchmarks.md).  50,000
#: keeps the rounds' cost under a tenth of a large copy's, and the chunk a task holds
#: to place and send it within tens of MB for records of a few hundred bytes.
CHUNK = 50_000


class ChunkResult(NamedTuple):
    """What one task did with its chunk (returned from the executor to the driver)."""

    partition: int
    records: int  # the chunk's records (fewer than its offsets: markers, aborted records)
    null_keys: int
    round_robin: int  # the round-robin position after the chunk
    committed: bool  # found already committed: an earlier attempt wrote it
    bytes: int = 0  # the chunk's keys and values, in bytes (progress only)
    held: bool = False  # its records came from the detection's read (copy.held)


@dataclass(frozen=True)
class RoundIO:
    """The driver's I/O: every destination partition's end offset now, one round's Spark
    job (told whether the round was resumed from a killed run's checkpoint), and the
    atomic write of the checkpoint."""

    ends: Callable[[], dict[int, int]]
    launch: Callable[[Checkpoint, bool], list[ChunkResult]]
    save: Callable[[Checkpoint], None]


#: Per source partition: (records copied this run, of them with a null key, of them taken
#: from the partitioner's detection read rather than read again).
Copied = dict[int, tuple[int, int, int]]


def add_copied(total: Copied, partition: int, counts: tuple[int, int, int]) -> None:
    """Add ``counts`` to ``partition``'s in ``total``."""
    n, nulls, held = total.get(partition, (0, 0, 0))
    total[partition] = (n + counts[0], nulls + counts[1], held + counts[2])


def starting_state(
    saved: Checkpoint | None, partitioner: str, partitions: int, log_starts: dict[int, int]
) -> Checkpoint:
    """This run's state: the saved one (its round in flight kept as recorded) with the
    chosen partitioner and count pinned, each partition starting no earlier than its log."""
    base = saved or Checkpoint({}, None, None)
    nexts = {p: max(base.next.get(p, 0), start) for p, start in log_starts.items()}
    return replace(
        base, next={**base.next, **nexts}, partitioner=partitioner, partitions=partitions
    )


#: Where a partition's chunk that starts at an offset ends, before its target: one
#: decided by what the chunk holds (a latest-per-key copy's, :mod:`migcheck.copy.latest`).
Cut = Callable[[int, int], int]


def pick_chunks(
    nexts: dict[int, int], targets: dict[int, int], size: int, cut: Cut | None = None
) -> dict[int, Chunk]:
    """Each partition's next chunk ``[a, min(a + size, target))`` (``cut(partition, a)``
    in place of ``a + size`` where given), for those not at their target yet: offsets,
    since markers and aborted records leave gaps."""
    return {
        p: Chunk(a, min(cut(p, a) if cut else a + size, end))
        for p, end in sorted(targets.items())
        if (a := nexts.get(p, 0)) < end
    }


def with_round(state: Checkpoint, chunks: dict[int, Chunk], ends: dict[int, int]) -> Checkpoint:
    """The state to record before launching a round: its chunks and the destination's ends."""
    return replace(state, pending=Round(dict(chunks), dict(ends)))


def round_robin_of(state: Checkpoint, partition: int) -> int:
    """Where ``partition``'s null keys continue round-robin (a first chunk starts at the
    partition itself, as earlier versions did)."""
    return state.round_robin.get(partition, partition)


def settled(state: Checkpoint, results: Iterable[ChunkResult]) -> Checkpoint:
    """The state after a round: every partition past its chunk (committed before, or copied
    now), at its chunk's next round-robin position, and no round in flight."""
    if state.pending is None:
        raise ValueError("no round in flight to settle")
    chunks = state.pending.chunks
    by_partition = {r.partition: r for r in results}
    if set(by_partition) != set(chunks):
        raise ValueError(f"a round of partitions {sorted(chunks)} returned {sorted(by_partition)}")
    nexts = {p: max(state.next.get(p, 0), c.end) for p, c in chunks.items()}
    rr = {p: r.round_robin for p, r in by_partition.items()}
    return replace(
        state,
        next={**state.next, **nexts},
        round_robin={**state.round_robin, **rr},
        pending=None,
    )


def copied_this_run(result: ChunkResult, resumed: bool) -> tuple[int, int]:
    """Records (and null keys) this run wrote for a chunk.  A chunk found committed was
    written by an earlier attempt: of this run when this run launched the round (a Spark
    task retry), of a killed run when the round was resumed from the checkpoint."""
    if result.committed and resumed:
        return 0, 0
    return result.records, result.null_keys


def _always(state: Checkpoint) -> bool:
    return True


def run_rounds(
    state: Checkpoint,
    targets: dict[int, int],
    io: RoundIO,
    size: int = CHUNK,
    proceed: Callable[[Checkpoint], bool] = _always,
    cut: Cut | None = None,
) -> tuple[Checkpoint, Copied]:
    """Copy every partition up to ``targets``, round by round: first a round a killed run
    left in flight, as it was recorded, then a new one while any partition has records
    and ``proceed`` (asked before each new round: a follow's stop) allows it; each chunk of
    ``size`` offsets, or as ``cut`` ends it.
    The starting state is recorded first (the partitioner and the destination's count
    pinned before anything is written), each round before it is launched, and each
    round's outcome after it."""
    copied: Copied = {}
    io.save(state)
    if state.pending is not None:
        state = _launch(state, io, copied, resumed=True)
    while (chunks := pick_chunks(state.next, targets, size, cut)) and proceed(state):
        state = with_round(state, chunks, io.ends())
        io.save(state)
        state = _launch(state, io, copied, resumed=False)
    return state, copied


def _launch(state: Checkpoint, io: RoundIO, copied: Copied, resumed: bool) -> Checkpoint:
    results = io.launch(state, resumed)
    for r in results:
        n, nulls = copied_this_run(r, resumed)
        add_copied(copied, r.partition, (n, nulls, n if r.held else 0))
    state = settled(state, results)
    io.save(state)
    return state
