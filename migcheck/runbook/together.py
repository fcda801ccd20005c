"""Several apps of the same topics in one offline procedure (``--application-id``
repeated): every app stops, the topics change once, every app restarts.

Why one procedure, not one runbook per app.  The topics change for every reader at once:
run one app's runbook after another and the second app's stop comes after the first
app's alter or copy, so it reads records under the new count with its old state, or
loses the topic its producers left.  So each app's own procedure (its framework's, with
its own checks) is written as for that app alone, and they are laid side by side, step
for step: the same framework and strategy give each the same steps in the same order.
A step every app has alike is written once (the pre-checks of apps with the same
sources); the change of the topics themselves (role CHANGE: the alter, or the copy and
the producers' switch) is written once, for every topic of the change (``changes``: each
app's own procedure names only the topics it reads); every other step is written once
per app, its title naming the app, in the order the apps were given.

Pure: steps in, steps out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from migcheck.model.runbook import Step, StepRole


def side_by_side(
    procedures: Sequence[tuple[str, Sequence[Step]]], changes: Sequence[Step]
) -> tuple[Step, ...]:
    """One procedure from each app's own (``(app id, steps)``, in the order given), the
    topics' change written once, each of its steps (role CHANGE) as ``changes`` has it,
    in order.  Procedures that differ in shape (another framework, another strategy)
    cannot be laid side by side: ValueError (the command refuses those before)."""
    shapes = {tuple(s.role for s in steps) for _, steps in procedures}
    if len(shapes) != 1:
        raise ValueError("several apps' procedures are laid side by side only when alike")
    (shape,) = shapes
    if sum(role is StepRole.CHANGE for role in shape) != len(changes):
        raise ValueError("the topics' change has one step for each of the procedures'")
    written = iter(changes)
    out: list[Step] = []
    for at, role in enumerate(shape):
        if role is StepRole.CHANGE:
            out.append(next(written))
            continue
        out += _one_position([(app, steps[at]) for app, steps in procedures])
    return tuple(out)


def _one_position(steps: Sequence[tuple[str, Step]]) -> list[Step]:
    """The steps at one position of every app's procedure besides the change: one step
    where they are alike, else each app's own, named."""
    alike = [s for _, s in steps]
    if all(s == alike[0] for s in alike):
        return [alike[0]]
    return [replace(s, title=f"{s.title} ({app})") for app, s in steps]
