"""What to run next for a change, with the real ids filled in: the gate's "next" commands.

Pure.  Each command is one line an operator can paste: every id from the cluster is one
shell word (:func:`~migcheck.untrusted.sh_word`), never code.  Stateful apps get their
reprocess runbook, plain readers with per-key order or loss at stake the ordering
runbook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from migcheck.frameworks.registry import STATEFUL_KINDS
from migcheck.model.gate import GateReader, GateVerdict, Proposal, RuleCode
from migcheck.model.history import ACCEPT_LOST_HISTORY
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import Strategy
from migcheck.untrusted import arg_problem, quoted, sh_word

#: Verdicts no runbook serves: the change does not happen as proposed, or is safe.
_NO_RUNBOOK = (GateVerdict.DATA_LOSS, GateVerdict.REFUSED, GateVerdict.SAFE, GateVerdict.MOVES)
#: The plain readers whose verdicts the ordering runbook settles.
_GROUP_VERDICTS = (GateVerdict.ORDER, GateVerdict.LOSS_RISK)


def next_steps(
    bootstrap: str, command_config: str | None, p: Proposal, verdict: GateVerdict,
    readers: Sequence[GateReader], planned: Mapping[str, int] | None = None,
    moves: Mapping[str, str] | None = None,
) -> list[str]:  # fmt: skip
    """The runbook commands that make ``p`` safe (none for a change no runbook serves:
    a destroyed topic's guard is in its reason); before an app's, the full set of topics
    it must widen together where the plan (``planned``: topic to count) leaves one out.
    ``moves``: the apps whose every store can move instead of a rebuild, each with the
    ``--topology`` file it was judged with (``migcheck runbook`` needs it to move them)."""
    if verdict in _NO_RUNBOOK or p.after is None:
        return []
    base = ["migcheck", "runbook", "--bootstrap-server", bootstrap]
    base += ["--command-config", command_config] if command_config else []
    change = ["--topic", p.topic, "--to", str(p.after)]
    at_risk = [r for r in readers if r["verdict"] is not GateVerdict.SAFE]
    apps = [r for r in at_risk if ReaderKind(r["kind"]) in STATEFUL_KINDS]
    groups = [r for r in at_risk if r["verdict"] in _GROUP_VERDICTS and r not in apps]
    widened = {p.topic, *(planned or {})}
    lines = [
        line
        for r in apps
        for line in (
            *_full_set(r, widened, p),
            *_way_out(r, r["id"] in (moves or {})),
            _line([*base, "--application-id", r["id"], *change, *_moving(r, moves or {})]),
        )
    ]
    if groups:
        named = [a for r in groups for a in ("--group", r["id"])]
        lines.append(_line([*base, *named, *change]))
    return lines


def _full_set(app: GateReader, widened: set[str], p: Proposal) -> tuple[str, ...]:
    """Where the plan widens one side of a join alone: the set that must widen together,
    named, and the command that judges it (the app's runbook refuses a split set)."""
    lines = []
    for group in app.get("together") or []:
        missing = [t for t in group if t not in widened]
        if missing:
            lines.append(
                f"# {quoted(app['id'])} joins {', '.join(group)}: widen {', '.join(missing)} "
                f"with {p.topic} in the same change (co-partitioned); judge the set with:"
            )
            judge = ["migcheck", "app", "--application-id", app["id"]]
            lines.append(_line([*judge, *(a for t in group for a in ("--topic", t)),
                                "--to", str(p.after)]))  # fmt: skip
    return tuple(lines)


def _way_out(app: GateReader, movable: bool) -> tuple[str, ...]:
    """Before an app's runbook that would be refused because its sources lost records
    (MC204): the way out, named: the state moved where every store can move (``movable``),
    else the loss accepted, never added for the operator (it gives up data)."""
    if RuleCode.REMEDY_LOSES_HISTORY not in app["rules"]:
        return ()
    if movable:
        return (
            f"# {quoted(app['id'])}: its sources lack their whole history (MC204); every store "
            "can move instead, which reprocesses nothing:",
        )
    return (
        f"# {quoted(app['id'])}: refused while its sources lack their whole history (MC204); "
        f"add {ACCEPT_LOST_HISTORY} to rebuild its state without the deleted records",
    )


def _moving(app: GateReader, moves: Mapping[str, str]) -> list[str]:
    """The runbook's options that move an app's state (MC204, every store movable)."""
    if RuleCode.REMEDY_LOSES_HISTORY not in app["rules"] or app["id"] not in moves:
        return []
    return ["--topology", moves[app["id"]], "--strategy", str(Strategy.MOVE_STATE)]


def _line(argv: Sequence[str]) -> str:
    """The command as one line of shell words; where an id cannot be one (``migcheck
    runbook`` would refuse it too), why, instead of a command."""
    for arg in argv:
        problem = arg_problem(arg)
        if problem:
            return f"# no runbook can name {quoted(arg)}: {problem}"
    return " ".join(sh_word(a) for a in argv)
