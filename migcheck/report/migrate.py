"""``migcheck migrate``'s last lines: where it cut over, or where it stopped."""

from __future__ import annotations

from migcheck.model.migrate import MigrateResult
from migcheck.untrusted import visible


def _ending(r: MigrateResult) -> list[str]:
    """How the rollback window ended."""
    back = r.rolled_back
    if back is None:
        return [f"complete: the producers write {visible(r.into)}; the old side is to delete"]
    return [
        f"rolled back (cut-over {back.cutover_s:.1f} s): the producers write "
        f"{visible(r.topic)} again, the old app serves",
        *(f"group {visible(g)}: moved back to {visible(r.topic)}" for g in back.groups),
        *(f"group {visible(g)}: moved back to the app's outputs" for g in back.downstream),
    ]


def _seeded(r: MigrateResult) -> list[str]:
    """A shadow seeded with moved state: what moved, its restore, the readers' wait."""
    s = r.seeded
    if s is None:
        return []
    return [
        f"app: its state moved, not rebuilt ({s.records} changelog records); the shadow "
        f"restored it and caught up in {s.restore_s:.1f} s, the downstream groups waited "
        f"{s.waited_s:.1f} s for it"
    ]


def render_migrate_text(r: MigrateResult) -> str:
    """The barrier's ends, the cut-over's time and the moved groups; or why it stopped."""
    head = (
        f"migcheck migrate: {visible(r.topic)} -> {visible(r.into)} (partitioner {r.partitioner})"
    )
    if r.stopped is not None:
        return f"{head}\nstopped: {visible(r.stopped)}\n"
    old, new = r.old_ends or {}, r.new_ends or {}
    lines = [
        head,
        f"barrier: {visible(r.topic)} at {sum(old.values())} offsets, "
        f"{visible(r.into)} at {sum(new.values())}",
        f"cut-over (barrier, drain, check): {r.cutover_s or 0.0:.1f} s",
        *(f"group {visible(g)}: moved to {visible(r.into)} at the barrier" for g in r.groups),
        *(f"app: its shadow {visible(s)} serves {visible(r.into)}" for s in r.shadows),
        *_seeded(r),
        *(f"group {visible(g)}: moved to the shadow's outputs" for g in r.downstream),
        *_ending(r),
    ]
    return "\n".join(lines) + "\n"
