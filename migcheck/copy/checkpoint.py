"""The copy's recovery state, one file the driver alone writes: the checkpoint.

It records, per source partition, the next offset to copy and the round-robin
position of its null keys, pins the partitioner and the destination's count,
and, while a round runs, the round itself (:class:`Round`: each partition's
pending chunk and where every destination partition ended before it).  Every
attempt of a task is handed its chunk by the driver, so no executor keeps state
of its own and a retry on another worker, or a later run after a kill, settles
the same chunk from the same record.  The file is written atomically
(:mod:`migcheck.files`): a reader finds the state before a step or after it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migcheck.copy.errors import CheckpointError
from migcheck.files import write_atomically
from migcheck.hashing.partitioners import PARTITIONERS


@dataclass(frozen=True)
class Chunk:
    """A source partition's offsets ``[start, end)``, copied in one transaction.

    Offsets, not records: aborted records, transaction markers and compaction
    leave gaps, so a chunk may hold fewer records than offsets, or none."""

    start: int
    end: int


@dataclass(frozen=True)
class Round:
    """What the driver recorded before launching a round: the chunk of each source
    partition in it, and every destination partition's end offset (its high
    watermark) before any of them was written.  A chunk's records, found in order
    after those offsets, prove that its transaction committed."""

    chunks: dict[int, Chunk]
    ends: dict[int, int]


@dataclass(frozen=True)
class Checkpoint:
    """The copy's state: the next source offset per partition, the partitioner it
    places keys with and the destination's partition count (None in a checkpoint
    that did not record them), each partition's round-robin position for null keys,
    the round in flight (None between rounds), and, for a latest-per-key copy, where
    each source partition ended when it began (:mod:`migcheck.copy.latest`)."""

    next: dict[int, int]
    partitioner: str | None
    partitions: int | None
    round_robin: dict[int, int] = field(default_factory=dict)
    pending: Round | None = None
    until: dict[int, int] | None = None


def temporary_checkpoint(topic: str, into: str) -> str:
    """Where a copy without ``--checkpoint`` keeps its state while it runs (under TMPDIR)."""
    return os.path.join(os.environ.get("TMPDIR", "/tmp"), f"migcheck-copy-{topic}-{into}.json")


def load_checkpoint(path: str | None, topic: str, into: str) -> Checkpoint | None:
    """The checkpoint of an earlier copy of this pair; None when no copy was checkpointed."""
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        pair = (data["topic"], data["into"])
        saved = _parse(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"--checkpoint {path}: not a migcheck copy checkpoint ({e})"
        ) from None
    if pair != (topic, into):
        raise CheckpointError(
            f"--checkpoint {path} records a copy of {pair[0]} into {pair[1]}, "
            f"not of {topic} into {into}"
        )
    if saved.partitioner is not None and saved.partitioner not in PARTITIONERS:
        raise CheckpointError(f"--checkpoint {path}: unknown partitioner {saved.partitioner!r}")
    if "pending" in data:
        return saved
    try:
        return _with_legacy_progress(path, saved)
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise CheckpointError(f"--checkpoint {path}: unreadable progress beside it ({e})") from None


def _parse(data: dict[str, Any]) -> Checkpoint:
    pending = data.get("pending")
    return Checkpoint(
        next=_ints(data["next"]),
        partitioner=data.get("partitioner"),
        partitions=None if data.get("partitions") is None else int(data["partitions"]),
        round_robin=_ints(data.get("round_robin") or {}),
        pending=None if pending is None else _parse_round(pending),
        until=None if data.get("until") is None else _ints(data["until"]),
    )


def _parse_round(data: dict[str, Any]) -> Round:
    chunks = {int(p): Chunk(int(c["from"]), int(c["to"])) for p, c in data["chunks"].items()}
    return Round(chunks, _ints(data["ends"]))


def _ints(mapping: dict[str, Any]) -> dict[int, int]:
    return {int(k): int(v) for k, v in mapping.items()}


def _with_legacy_progress(path: str, saved: Checkpoint) -> Checkpoint:
    """A checkpoint written before the driver kept all the state (it has no ``pending``).

    Those versions advanced ``next`` only at the end of a run and kept each
    partition's progress in ``{checkpoint}.parts/N.json`` on the executor that ran
    it.  Progress found there is taken over (a partition is past what the
    checkpoint says); a chunk still pending there was recorded in a form this
    version cannot settle, so the copy is refused rather than risk a duplicate.
    """
    parts = Path(f"{path}.parts")
    nexts, rr = dict(saved.next), dict(saved.round_robin)
    for f in sorted(parts.glob("*.json")) if parts.is_dir() else []:
        p, progress = int(f.stem), json.loads(f.read_text(encoding="utf-8"))
        if progress.get("pending"):
            raise CheckpointError(
                f"--checkpoint {path}: an earlier migcheck's copy was interrupted inside a "
                f"chunk ({f}); finish the copy with the migcheck version that started it"
            )
        nexts[p] = max(nexts.get(p, 0), int(progress.get("next", 0)))
        rr[p] = int(progress.get("round_robin", p))
    return Checkpoint(nexts, saved.partitioner, saved.partitions, rr, None)


def check_destination(path: str | None, saved: Checkpoint | None, into: str, count: int) -> None:
    """Refuse a catch-up into a destination whose count changed: keys would be placed two ways."""
    if saved and saved.partitions not in (None, count):
        raise CheckpointError(
            f"--checkpoint {path} copied into {saved.partitions} partitions and "
            f"{into} now has {count}: keys would be placed two ways"
        )


def save_checkpoint(path: str, topic: str, into: str, state: Checkpoint) -> None:
    """Record ``state``, whole or not at all: the only write of the copy's recovery state."""
    data = {
        "topic": topic,
        "into": into,
        "partitioner": state.partitioner,
        "partitions": state.partitions,
        "next": _strs(state.next),
        "round_robin": _strs(state.round_robin),
        "pending": None if state.pending is None else _round_json(state.pending),
    }
    if state.until is not None:  # only a latest-per-key copy's: others' stay as they were
        data["until"] = _strs(state.until)
    try:
        write_atomically(path, json.dumps(data, sort_keys=True))
    except OSError as e:
        raise CheckpointError(f"cannot write the copy's checkpoint {path}: {e.strerror}") from None


def _round_json(r: Round) -> dict[str, Any]:
    chunks = {str(p): {"from": c.start, "to": c.end} for p, c in sorted(r.chunks.items())}
    return {"chunks": chunks, "ends": _strs(r.ends)}


def _strs(mapping: dict[int, int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(mapping.items())}
