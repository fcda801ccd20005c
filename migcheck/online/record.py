"""The cut-over record: the barrier a migration switched at, kept beside its checkpoint.

It is written before the operator is asked to switch the producers, since from then
on a producer may write the new topic.  A ``migrate`` run that stops after that point
must not start over: a second barrier would be taken at the new topic's later ends,
and a group already moved would get offsets past records it never read.  So a run
that finds the record refuses, in one line naming the file, which holds what an
operator needs to finish by hand: both topics' ends at the barrier and the shadow's
outputs' ends.  Resuming at the moves is not built yet (docs/runbooks.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from migcheck.errors import UsageError
from migcheck.files import write_atomically
from migcheck.online.phases import Barrier, Plan


def record_path(checkpoint: str) -> Path:
    """Where ``checkpoint``'s migration keeps its cut-over record."""
    return Path(f"{checkpoint}.cutover.json")


def keep(checkpoint: str, plan: Plan, barrier: Barrier) -> None:
    """Write the record, whole or not at all, before the switch is asked."""
    app = plan.app
    record = {
        "topic": plan.topic,
        "into": plan.into,
        "old_ends": barrier.old,
        "new_ends": barrier.new,
        "shadow_output_ends": barrier.outputs,
        "groups": list(plan.groups),
        "downstream_groups": list(app.downstream) if app else [],
        "application_id": app.app_id if app else None,
        "shadow_application_id": app.shadow_id if app else None,
    }
    write_atomically(record_path(checkpoint), json.dumps(record, indent=2) + "\n")


def refuse_after_cutover(checkpoint: str) -> None:
    """One line, before anything is written, when this checkpoint's migration has
    already reached its switch."""
    path = record_path(checkpoint)
    if path.exists():
        raise UsageError(
            f"{path} shows this migration reached its cut-over: producers may write the new "
            "topic, so it cannot start over; finish the moves by hand from the barrier's "
            "ends in that file (docs/runbooks.md, Online: a stop after the barrier)"
        )
