"""Hooks: automation acting at each phase of the online migration, as gh-ost's on-* hooks
do (issue 72).  ``--hooks-dir DIR``: as the walk enters a state, it runs ``DIR/on-<phase>``
(``on-barrier``, ``on-switch``, ``on-move-readers``...) if it is there and executable,
with the migration's facts in ``MIGCHECK_*`` variables: this is how automation pauses
and switches the producers.

A hook that fails (a non-zero exit, or it cannot be run) at the barrier reverts the
cut-over, as a timed-out one does (the producers resume on the old topic, and the
cut-over is offered again); one that fails earlier stops the run, nothing cut over (the
checkpoint resumes it).  From the switch on the way back is the rollback's, so a failing
hook is reported on its line and the run goes on (the walk decides: ``steps``).  Names
in the variables are data, never run: the environment is the one place they reach the
hook.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from migcheck.model.copy import CopyLag
from migcheck.online.phases import Barrier, MigrateIO, Plan
from migcheck.online.sequence import State
from migcheck.online.steps import Hooks, Migration

#: Every hook's name starts so: gh-ost's convention.
HOOK_PREFIX = "on-"


def hook_name(state: State) -> str:
    """The file a state's hook is: ``on-`` and its phase, dashes for spaces."""
    return HOOK_PREFIX + state.phase.value.replace(" ", "-")


def hook_env(
    state: State, plan: Plan, barrier: Barrier | None, lag: CopyLag | None
) -> dict[str, str]:
    """What a hook is told, in ``MIGCHECK_*`` variables: the phase and way, the topics
    (comma-separated, a set's in the same order old and new), the groups and app ids it
    moves, the barrier's ends once taken (JSON: :func:`_ends_json`), the copies' lag when
    known."""
    env = {
        "MIGCHECK_PHASE": state.phase.value,
        "MIGCHECK_PHASE_NUMBER": str(state.phase.number),
        "MIGCHECK_WAY": state.way.value,
        "MIGCHECK_TOPIC": ",".join(plan.olds),
        "MIGCHECK_NEW_TOPIC": ",".join(plan.news),
        "MIGCHECK_GROUPS": ",".join(plan.groups),
        "MIGCHECK_APP_ID": ",".join(a.app_id for a in plan.apps),
        "MIGCHECK_SHADOW_ID": ",".join(a.shadow_id for a in plan.apps),
        "MIGCHECK_DOWNSTREAM_GROUPS": ",".join(g for a in plan.apps for g in a.downstream),
    }
    if barrier is not None:
        env["MIGCHECK_BARRIER_OLD_ENDS"] = _ends_json(barrier.old)
        env["MIGCHECK_BARRIER_NEW_ENDS"] = _ends_json(barrier.new)
    if lag is not None:
        env["MIGCHECK_LAG_RECORDS"] = str(lag.records)
    return env


def _ends_json(marks: dict[str, dict[int, int]]) -> str:
    """A barrier's ends as a hook reads them: one topic's as partition to offset (as
    before sets), several topics' as topic to that."""
    by_topic = {t: {str(p): o for p, o in ends.items()} for t, ends in marks.items()}
    return json.dumps(next(iter(by_topic.values())) if len(by_topic) == 1 else by_topic)


def run_hook(directory: str, state: State, env: Mapping[str, str]) -> str | None:
    """Run ``state``'s hook, if ``directory`` has it: None when it is not there or
    succeeded, else one line saying how it failed (its last line of output)."""
    path = Path(directory) / hook_name(state)
    if not path.is_file():
        return None
    try:
        done = subprocess.run(
            [str(path)], env={**os.environ, **env}, capture_output=True, text=True, check=False
        )
    except OSError as e:  # not executable, a bad interpreter line
        return f"hook {path} could not run: {e.strerror or e}"
    if done.returncode == 0:
        return None
    said = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return f"hook {path} failed (exit {done.returncode})" + (f": {said[-1]}" if said else "")


def hooks_in(directory: str | None) -> Hooks:
    """The walk's hooks: those ``directory`` holds (``--hooks-dir``), or none."""

    def run(state: State, m: Migration, io: MigrateIO) -> str | None:
        if directory is None:
            return None
        env = hook_env(state, m.on(state.way), m.barriers.get(state.way), io.lag())
        return run_hook(directory, state, env)

    return run
