"""``migcheck migrate``'s last lines: where it cut over, or where it stopped."""

from __future__ import annotations

from migcheck.model.migrate import MigrateResult
from migcheck.untrusted import visible
from migcheck.words import listing


def _olds(r: MigrateResult) -> str:
    return listing([visible(old) for old, _ in r.topics])


def _news(r: MigrateResult) -> str:
    return listing([visible(new) for _, new in r.topics])


def _ending(r: MigrateResult) -> list[str]:
    """How the rollback window ended."""
    back = r.rolled_back
    if back is None:
        return [f"complete: the producers write {_news(r)}; the old side is to delete"]
    return [
        f"rolled back (cut-over {back.cutover_s:.1f} s): the producers write "
        f"{_olds(r)} again, the old app serves",
        *(f"group {visible(g)}: moved back to {_olds(r)}" for g in back.groups),
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


def _partitioners(r: MigrateResult) -> str:
    """The copies' partitioners: one, or each old topic's where its producers differ."""
    if len(set(r.partitioners.values())) == 1:
        return f"partitioner {next(iter(r.partitioners.values()))}"
    return "partitioners " + ", ".join(f"{visible(t)} {p}" for t, p in r.partitioners.items())


def _barrier(r: MigrateResult) -> str:
    """Each old topic's ends at the barrier and its new one's, summed over partitions."""
    old, new = r.old_ends or {}, r.new_ends or {}
    return "barrier: " + "; ".join(
        f"{visible(o)} at {sum(old.get(o, {}).values())} offsets, "
        f"{visible(n)} at {sum(new.get(n, {}).values())}"
        for o, n in r.topics
    )


def render_migrate_text(r: MigrateResult) -> str:
    """The barrier's ends, the cut-over's time and the moved groups; or why it stopped."""
    moves = ", ".join(f"{visible(o)} -> {visible(n)}" for o, n in r.topics)
    head = f"migcheck migrate: {moves} ({_partitioners(r)})"
    if r.stopped is not None:
        return f"{head}\nstopped: {visible(r.stopped)}\n"
    lines = [
        head,
        _barrier(r),
        f"cut-over (barrier, drain, check): {r.cutover_s or 0.0:.1f} s",
        *(f"group {visible(g)}: moved to {_news(r)} at the barrier" for g in r.groups),
        *(f"app: its shadow {visible(s)} serves {_news(r)}" for s in r.shadows),
        *_seeded(r),
        *(f"group {visible(g)}: moved to the shadow's outputs" for g in r.downstream),
        *_ending(r),
    ]
    return "\n".join(lines) + "\n"
