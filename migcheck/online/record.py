"""The cut-over record: the barrier a migration switched at, kept beside its checkpoint.

It is written before the operator is asked to switch the producers, since from then
on a producer may write the new topic.  A ``migrate`` run that stops after that point
must not start over: a second barrier would be taken at the new topic's later ends,
and a group already moved would get offsets past records it never read.  So a run
that finds the record resumes after its barrier instead: the switch asked again, each
group not yet moved moved at the recorded ends, then the rollback window (Vitess keeps
a workflow's state for the same reason: its traffic switches can be resumed or
reversed by a later command).

The record also keeps how the migration ended.  A rollback's barrier is written into
it the same way, before its switch is asked: a run after that refuses, naming the
file, which holds what an operator needs to finish the moves back by hand.  A
completed or rolled-back migration is refused too: there is nothing left to do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from migcheck.errors import UsageError
from migcheck.files import write_atomically
from migcheck.online.phases import Barrier, Plan


class Stage(StrEnum):
    """How far the recorded migration got."""

    SWITCHING = "switching"  # the barrier taken, the producers asked to switch
    ROLLING_BACK = "rolling back"  # the rollback's barrier taken, its switch asked
    COMPLETE = "complete"
    ROLLED_BACK = "rolled back"


def record_path(checkpoint: str) -> Path:
    """Where ``checkpoint``'s migration keeps its cut-over record."""
    return Path(f"{checkpoint}.cutover.json")


def _ends(barrier: Barrier) -> dict[str, Any]:
    return {
        "old_ends": barrier.old,
        "new_ends": barrier.new,
        "shadow_output_ends": barrier.outputs,
        "took_s": barrier.took_s,
    }


def keep(checkpoint: str, plan: Plan, barrier: Barrier) -> None:
    """Write the record, whole or not at all, before the switch is asked."""
    app = plan.app
    record = {
        "stage": str(Stage.SWITCHING),
        "topic": plan.topic,
        "into": plan.into,
        **_ends(barrier),
        "groups": list(plan.groups),
        "downstream_groups": list(app.downstream) if app else [],
        "application_id": app.app_id if app else None,
        "shadow_application_id": app.shadow_id if app else None,
    }
    _write(checkpoint, record)


def keep_rollback(checkpoint: str, barrier: Barrier) -> None:
    """The rollback's barrier, written into the record before its switch is asked (its
    topics the other way round: ``old_ends`` are the new topic's)."""
    record = _read(checkpoint)
    record.update(stage=str(Stage.ROLLING_BACK), rollback=_ends(barrier))
    _write(checkpoint, record)


def ended(checkpoint: str, stage: Stage) -> None:
    """The migration completed, or its rollback finished."""
    record = _read(checkpoint)
    record["stage"] = str(stage)
    _write(checkpoint, record)


@dataclass(frozen=True)
class Resumed:
    """A recorded migration to resume after its barrier: the barrier, and the shadow the
    first run started (a ksqlDB query names its own, found only then); the record as read,
    for :func:`same_migration`."""

    barrier: Barrier
    shadow_id: str | None
    path: Path
    record: dict[str, Any]


def resumable(checkpoint: str) -> Resumed | None:
    """The recorded barrier to resume after; None when nothing is recorded.  Refused in
    one line when the migration ended, or stopped within its rollback."""
    path = record_path(checkpoint)
    if not path.exists():
        return None
    record = _read(checkpoint)
    stage = record.get("stage", Stage.SWITCHING)
    if stage == Stage.ROLLING_BACK:
        raise UsageError(
            f"{path} shows this migration stopped within its rollback's cut-over: finish the "
            "moves back by hand from the ends under 'rollback' in that file (docs/runbooks.md, "
            "Online: a stop after the barrier)"
        )
    if stage in (Stage.COMPLETE, Stage.ROLLED_BACK):
        raise UsageError(f"{path} shows this migration {stage}: there is nothing left to do")
    try:
        barrier = Barrier(
            _partitions(record["old_ends"]),
            _partitions(record["new_ends"]),
            float(record.get("took_s", 0.0)),
            {t: _partitions(e) for t, e in record["shadow_output_ends"].items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UsageError(f"{path}: not a whole cut-over record ({e!r}); restore it") from e
    return Resumed(barrier, record.get("shadow_application_id"), path, record)


def same_migration(resumed: Resumed, plan: Plan) -> None:
    """The run resuming names what the recorded one moved; else one line says which."""
    record = resumed.record
    app = plan.app
    mine = {
        "topic": plan.topic,
        "into": plan.into,
        "groups": sorted(plan.groups),
        "downstream_groups": sorted(app.downstream) if app else [],
        "application_id": app.app_id if app else None,
    }
    for name, value in mine.items():
        kept = record.get(name)
        kept = sorted(kept) if isinstance(kept, list) else kept
        if kept != value:
            raise UsageError(
                f"{resumed.path} records {name} {kept!r}, this run {value!r}: "
                "resume with the recorded migration's options"
            )


def _partitions(ends: dict[str, int]) -> dict[int, int]:
    return {int(p): int(o) for p, o in ends.items()}


def _read(checkpoint: str) -> dict[str, Any]:
    path = record_path(checkpoint)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read the cut-over record ({e}); restore it") from e
    if not isinstance(record, dict):
        raise UsageError(f"{path}: not a cut-over record; restore it")
    return record


def _write(checkpoint: str, record: dict[str, Any]) -> None:
    write_atomically(record_path(checkpoint), json.dumps(record, indent=2) + "\n")
