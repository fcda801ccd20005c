"""The copy's recovery state on disk: the run's checkpoint and each partition's progress.

The checkpoint (``--checkpoint``) records, per source partition, the next offset
to copy, and pins the partitioner and the destination's count.  Each partition's
progress file, in a ``.parts`` directory beside it, records the chunk that may
be half committed.  Both are written atomically (:mod:`migcheck.files`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migcheck.copy.errors import CheckpointError
from migcheck.files import write_atomically
from migcheck.hashing.partitioners import PARTITIONERS


@dataclass(frozen=True)
class Checkpoint:
    """What an earlier run recorded: the next source offset per partition, the
    partitioner it placed keys with and the destination's partition count (None
    in a checkpoint that did not record them)."""

    next: dict[int, int]
    partitioner: str | None
    partitions: int | None


def parts_dir(checkpoint: str | None, topic: str, into: str) -> Path:
    """Where the partitions' progress files live: beside the checkpoint, or under TMPDIR."""
    base = checkpoint or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), f"migcheck-copy-{topic}-{into}"
    )
    return Path(f"{base}.parts")


def load_checkpoint(path: str | None, topic: str, into: str) -> Checkpoint | None:
    """The checkpoint of an earlier copy of this pair; None when no copy was checkpointed."""
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        pair = (data["topic"], data["into"])
        offsets = {int(p): int(n) for p, n in data["next"].items()}
        partitioner = data.get("partitioner")
        partitions = None if data.get("partitions") is None else int(data["partitions"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"--checkpoint {path}: not a migcheck copy checkpoint ({e})"
        ) from None
    if pair != (topic, into):
        raise CheckpointError(
            f"--checkpoint {path} records a copy of {pair[0]} into {pair[1]}, "
            f"not of {topic} into {into}"
        )
    if partitioner is not None and partitioner not in PARTITIONERS:
        raise CheckpointError(f"--checkpoint {path}: unknown partitioner {partitioner!r}")
    return Checkpoint(offsets, partitioner, partitions)


def check_destination(path: str | None, saved: Checkpoint | None, into: str, count: int) -> None:
    """Refuse a catch-up into a destination whose count changed: keys would be placed two ways."""
    if saved and saved.partitions not in (None, count):
        raise CheckpointError(
            f"--checkpoint {path} copied into {saved.partitions} partitions and "
            f"{into} now has {count}: keys would be placed two ways"
        )


def save_checkpoint(
    path: str | None,
    topic: str,
    into: str,
    partitioner: str,
    partitions: int,
    offsets: dict[int, int],
) -> None:
    """Record the next offset per source partition (nothing without ``--checkpoint``)."""
    if path is None:
        return
    data = {
        "topic": topic,
        "into": into,
        "partitioner": partitioner,
        "partitions": partitions,
        "next": {str(p): n for p, n in sorted(offsets.items())},
    }
    try:
        write_json(path, data)
    except OSError as e:
        raise CheckpointError(f"--checkpoint {path}: {e.strerror}") from None


def write_json(path: str | Path, data: Any) -> None:
    """``data`` as JSON, whole or not at all."""
    write_atomically(path, json.dumps(data, sort_keys=True))


def read_progress(path: str) -> dict[str, Any]:
    """A partition's progress: ``next`` offset, ``round_robin`` position, ``pending`` chunk."""
    try:
        with open(path, encoding="utf-8") as f:
            return dict(json.load(f))
    except FileNotFoundError:
        return {}


def write_progress(path: str, data: dict[str, Any]) -> None:
    write_json(path, data)
