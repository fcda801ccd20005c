"""The cut-over record: where a migration got to, kept beside its checkpoint from its
barrier on.

From the switch on, a producer may write the new topic.  A ``migrate`` run that stops
after that point must not start over: a second barrier would be taken at the new topic's
later ends, and a group already moved would get offsets past records it never read.  So
each state of the walk from the switch on (:data:`~migcheck.online.sequence.RESUMABLE`)
is written here before it runs, with the barrier and, once the old app settled, its
outputs' ends; a run that finds the record resumes at the recorded state instead (Vitess
keeps a workflow's state for the same reason: its traffic switches can be resumed or
reversed by a later command).

The record also keeps how the migration ended.  The rollback's states from its switch on
are written the same way, with its barrier: a run after that refuses, naming the file,
which holds what an operator needs to finish the moves back by hand.  A completed or
rolled-back migration is refused too: there is nothing left to do.

Records written before the phases were recorded name a ``stage`` (:class:`Stage`) instead;
they still resume, each stage read as the state it stood for.  Records written before a
migration moved a set of topics name its one ``topic`` and ``into``, and each barrier's
ends by partition alone; they still resume, read as a set of one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from migcheck.errors import UsageError
from migcheck.files import write_atomically
from migcheck.model.migrate import ShadowState
from migcheck.online.phases import AppPlan, Barrier, Hop, Plan
from migcheck.online.sequence import ENDINGS, TABLE, Phase, State, Way
from migcheck.online.steps import Migration


class Stage(StrEnum):
    """How far a record written before the phases were recorded says its migration got."""

    SWITCHING = "switching"  # the barrier taken, the producers asked to switch
    ROLLING_BACK = "rolling back"  # the rollback's barrier taken, its switch asked
    COMPLETE = "complete"
    ROLLED_BACK = "rolled back"


#: The state each such stage stood for, and whether the migration had ended there.
_STAGES: dict[Stage, tuple[State, bool]] = {
    Stage.SWITCHING: (State(Phase.SWITCH), False),
    Stage.ROLLING_BACK: (State(Phase.SWITCH, Way.BACK), False),
    Stage.COMPLETE: (State(Phase.COMPLETE), True),
    Stage.ROLLED_BACK: (State(Phase.MOVE_READERS, Way.BACK), True),
}


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


def write_record(checkpoint: str, state: State, m: Migration, ended: bool = False) -> None:
    """Write the record, whole or not at all: ``state`` before it runs (or, ``ended``, the
    state the migration ended in), the barrier, the old outputs' ends once the old app
    settled, and the rollback's barrier once taken."""
    plan = m.plan
    record: dict[str, Any] = {
        "phase": str(state.phase),
        "way": str(state.way),
        "ended": ended,
        "topics": [list(pair) for pair in plan.topics],
        **_ends(m.barriers[Way.FORWARD]),
        "groups": list(plan.groups),
        "applications": [_app_record(a) for a in plan.apps],
    }
    if m.changelog_ends is not None:
        record["changelog_ends"] = m.changelog_ends
    if Way.FORWARD in m.hops:
        record["old_output_ends"] = {h.old: h.old_ends for h in m.hops[Way.FORWARD]}
    if Way.BACK in m.barriers:
        record["rollback"] = _ends(m.barriers[Way.BACK])
    write_atomically(record_path(checkpoint), json.dumps(record, indent=2) + "\n")


def _app_record(app: AppPlan) -> dict[str, Any]:
    """One app of the migration as its record names it: its id, its shadow's (a ksqlDB
    query names its own, found only once started), its downstream groups, and where its
    shadow's state came from where it was moved."""
    moved = {"shadow_state": str(app.state)} if app.moved else {}
    return {
        "application_id": app.app_id,
        "shadow_application_id": app.shadow_id,
        "downstream_groups": list(app.downstream),
        **moved,
    }


def _apps_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's apps: its ``applications``, or the one app a record written before
    several could move names at its top level (none where it names none)."""
    if "applications" in record:
        apps = record["applications"]
        if not isinstance(apps, list) or not all(isinstance(a, dict) for a in apps):
            raise TypeError("applications")
        return apps
    if record.get("application_id") is None:
        return []
    keys = ("application_id", "shadow_application_id", "downstream_groups", "shadow_state")
    return [{k: record[k] for k in keys if k in record}]


@dataclass(frozen=True)
class Resumed:
    """A recorded migration to resume: the state to resume at, its barrier, the shadows
    the first run started by app (a ksqlDB query names its own, found only then), the old
    outputs' ends once the old apps settled; the record as read, for
    :func:`same_migration`; where each shadow's state came from, and the changelogs' ends
    a seeded shadow's move goes up to, once recorded."""

    state: State
    barrier: Barrier
    shadow_ids: dict[str, str]
    old_output_ends: dict[str, dict[int, int]] | None
    path: Path
    record: dict[str, Any]
    shadow_states: dict[str, ShadowState] = field(default_factory=dict)
    changelog_ends: dict[str, dict[int, int]] | None = None

    def hops(self, plan: Plan) -> list[Hop] | None:
        """The downstream groups' hops from the old app's outputs to the shadow's, as the
        old app left them; None before it settled."""
        if self.old_output_ends is None:
            return None
        pairs = [pair for app in plan.apps for pair in app.outputs]
        try:
            return [
                Hop(old, self.old_output_ends[old], new, self.barrier.outputs[new])
                for old, new in pairs
            ]
        except KeyError as e:
            raise UsageError(
                f"{self.path} records no ends for the app's output {e}: resume with the "
                "recorded migration's options"
            ) from None


def resumable(checkpoint: str) -> Resumed | None:
    """The recorded state to resume at; None when nothing is recorded.  Refused in one
    line when the migration ended, or stopped within its rollback."""
    path = record_path(checkpoint)
    if not path.exists():
        return None
    record = _read(checkpoint)
    state, ended = _state(record, path)
    if ended:
        raise UsageError(
            f"{path} shows this migration {ENDINGS[state]}: there is nothing left to do"
        )
    if state.way is Way.BACK:
        raise UsageError(
            f"{path} shows this migration stopped within its rollback's cut-over: finish the "
            "moves back by hand from the ends under 'rollback' in that file (docs/runbooks.md, "
            "Online: a stop after the barrier)"
        )
    try:
        olds, news = _sides(record)
        barrier = Barrier(
            _marks(record, record["old_ends"], olds),
            _marks(record, record["new_ends"], news),
            float(record.get("took_s", 0.0)),
            {t: _partitions(e) for t, e in record["shadow_output_ends"].items()},
        )
        settled = record.get("old_output_ends")
        outputs = None if settled is None else {t: _partitions(e) for t, e in settled.items()}
        if state == State(Phase.MOVE_READERS) and outputs is None:
            raise KeyError("old_output_ends")
        apps = _apps_of(record)
        shadows = {str(a["application_id"]): str(a.get("shadow_application_id") or "")
                   for a in apps}  # fmt: skip
        states = {str(a["application_id"]): ShadowState(a.get("shadow_state", "rebuild"))
                  for a in apps}  # fmt: skip
        logs = record.get("changelog_ends")
        changelogs = None if logs is None else {t: _partitions(e) for t, e in logs.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise UsageError(f"{path}: not a whole cut-over record ({e!r}); restore it") from e
    return Resumed(state, barrier, shadows, outputs, path, record, states, changelogs)


def _state(record: dict[str, Any], path: Path) -> tuple[State, bool]:
    """The recorded state and whether the migration ended there; a record that names no
    phase is read by its stage (switching, if it names none either)."""
    try:
        if "phase" not in record:
            return _STAGES[Stage(record.get("stage", Stage.SWITCHING))]
        state = State(Phase(record["phase"]), Way(record["way"]))
        ended = record["ended"]
        if not isinstance(ended, bool) or state not in (ENDINGS if ended else _RECORDED):
            raise ValueError(f"{state} {'ended' if ended else 'recorded'}")
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{path}: not a whole cut-over record ({e!r}); restore it") from e
    return state, ended


#: The states a record may name while its migration goes on: where a run resumes, and
#: the rollback's from its switch on (refused).
_RECORDED = tuple(state for state, row in TABLE.items() if row.recorded)


def same_migration(resumed: Resumed, plan: Plan) -> None:
    """The run resuming names what the recorded one moved; else one line says which."""
    record = resumed.record
    apps = _apps_of(record)
    olds, news = _sides(record)
    kept_of = {
        "topics": [list(pair) for pair in zip(olds, news, strict=True)],
        "application_ids": [a["application_id"] for a in apps],
        "groups": record.get("groups"),
        "downstream_groups": [g for a in apps for g in a.get("downstream_groups", [])],
    }
    mine = {
        "topics": [list(pair) for pair in plan.topics],
        "application_ids": sorted(a.app_id for a in plan.apps),
        "groups": sorted(plan.groups),
        "downstream_groups": sorted(g for a in plan.apps for g in a.downstream),
    }
    for name, value in mine.items():
        kept = kept_of[name]
        kept = sorted(kept) if isinstance(kept, list) else kept
        if kept != value:
            raise UsageError(
                f"{resumed.path} records {name} {kept!r}, this run {value!r}: "
                "resume with the recorded migration's options"
            )


def _sides(record: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The record's old topics and their new ones, in order: its ``topics``, or the one
    ``topic`` and ``into`` of a record written before sets."""
    if "topics" not in record:
        return (str(record["topic"]),), (str(record["into"]),)
    pairs = record["topics"]
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise TypeError("topics")
    return tuple(str(p[0]) for p in pairs), tuple(str(p[1]) for p in pairs)


def _marks(
    record: dict[str, Any], ends: dict[str, Any], topics: tuple[str, ...]
) -> dict[str, dict[int, int]]:
    """A barrier's ends by topic; a record written before sets keeps its one topic's by
    partition alone."""
    if "topics" not in record:
        return {topics[0]: _partitions(ends)}
    return {t: _partitions(ends[t]) for t in topics}


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
