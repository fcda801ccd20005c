"""The runbook's steps written out: Markdown for the change ticket, a script to run.

Both kinds of runbook, a Kafka Streams app's (:class:`RunbookFacts`) and plain consumer
groups' (:class:`GroupsFacts`), render through one path: a :class:`Frame` per kind of
facts says what surrounds the steps (title, header lines, the script's PROTOCOL, its
work directory's name and change id), and the steps are laid out alike.

The script (``--format sh``) prints every step and acts only with ``--execute``; without
it, its first and last lines say ``DRY RUN: nothing was changed`` and it never says
``Runbook complete.``. With ``--execute`` it stops at each manual step for a ``y`` on
stdin unless ``--yes`` answers them in advance. A re-run after a failure resumes at the
failed step: each step that succeeds leaves a marker in the work directory, so the reset
and the state wipe never run twice, and the stop is not asked for again once the app has
restarted. The failed step itself runs again from its start, so each of its actions can
repeat: checks only read, topic creation and the copy see what already exists. The work
directory belongs to one change (its id is recorded there); a script for another change
refuses it. Secrets stay in the ``--command-config`` file, which the script only names.
Kafka's tools come from ``$MIGCHECK_KAFKA_TOOL`` (a command taking the tool's name),
else ``$KAFKA_HOME/bin/<tool>.sh``, else ``<tool>.sh`` or ``<tool>`` on PATH. The
script's shell functions are ``runbook_prelude.sh`` beside this module, a file
shellcheck reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from migcheck.frameworks.registry import label
from migcheck.model.app import together_said
from migcheck.model.history import lost_history_accepted
from migcheck.model.migrate import ShadowState
from migcheck.model.runbook import (
    Check,
    GroupsFacts,
    Manual,
    Run,
    Runbook,
    RunbookFacts,
    ShellHelper,
    SplitRefusal,
    Step,
    StepRole,
    Strategy,
)
from migcheck.runbook.actions import moved_not_rebuilt
from migcheck.runbook.online import migrate_in_brief, shadow_moved
from migcheck.untrusted import markdown, md_fence, path_component, sh_comment, sh_word, visible
from migcheck.words import listing, plural

#: What a runbook is written from: a Kafka Streams app's facts or plain consumer groups'.
Facts = RunbookFacts | GroupsFacts

#: Arguments naming a file in the script's work directory start with this.
_IN_WORKDIR = "@"


def _md_arg(arg: str) -> str:
    return sh_word(f"<workdir>/{arg[1:]}" if arg.startswith(_IN_WORKDIR) else arg)


def _sh_arg(arg: str) -> str:
    if arg.startswith(_IN_WORKDIR):
        return f'"$WORKDIR"/{sh_word(arg[1:])}'
    return sh_word(arg)


def _header(f: RunbookFacts, steps: Sequence[Step], version: str, generated: str) -> list[str]:
    copies = listing(f.targets)
    target = f"{copies} ({f.to} partitions)" if f.copied else f"{f.to} partitions"
    widened = listing([f"{w.topic} ({w.partitions} -> {f.to} partitions)" for w in f.widened])
    lines = [
        f"Widen {widened} under the "
        f"{label(f.kind).removeprefix('a ')} {f.app_id}{_peers(f)}, strategy {f.strategy}: "
        f"it ends up reading {target}.",
        *(together_said(group) for group in f.together),
        _verdicts(f),
        *([f"The first error the app would print: {f.first_error}"] if f.first_error else []),
        *([f.strategy_reason] if f.strategy_reason else []),
        *([moved_not_rebuilt(f)] if f.strategy is Strategy.MOVE_STATE else []),
        *([shadow_moved(f)] if f.shadow_state is ShadowState.MOVE else []),
        f"Written by migcheck {version} on {generated} from the cluster at {f.bootstrap}.",
    ]
    if f.group_reads:
        groups = listing(list(dict.fromkeys(g for g, _ in f.group_reads)))
        lines.append(
            f"The plain groups {groups} move to {copies} with it, each at its copy's end."
            if f.copied
            else f"The plain groups {groups} keep each key in order through the alter."
        )
    if f.on_users_word:
        lines.append(
            f"The group {f.app_id} has no committed offsets: "
            + ", ".join(f.on_users_word)
            + " was taken as a source of the app on your word (--topic)."
        )
    if f.history_lost:
        lines.insert(0, lost_history_accepted(f.history_lost))
    if f.members:
        lines.append(f"The group has {plural(f.members, 'member')} now: {_stopping(steps)}.")
    return lines


def _peers(f: RunbookFacts) -> str:
    """The other apps the runbook moves with the first, if any, and how."""
    if not f.peers:
        return ""
    how = (
        "one barrier moves them all"
        if f.strategy is Strategy.ONLINE
        else "each stops, the topics change once, each restarts"
    )
    return f" and the apps {listing([p.app_id for p in f.peers])} ({how})"


def _verdicts(f: RunbookFacts) -> str:
    """migcheck app's verdict for the in-place change: the app's, and each peer's where
    the runbook judged it."""
    judged = [f"{p.app_id}: {p.verdict}" for p in f.peers if p.verdict]
    if not judged:
        return f"migcheck app verdict for the in-place change: {f.verdict}."
    return f"migcheck app verdicts for the in-place change: {f.app_id}: {f.verdict}, " + (
        ", ".join(judged) + "."
    )


def _stopping(steps: Sequence[Step]) -> str:
    """The step that stops the app's members, by its role (ksqlDB's is not the second)."""
    for number, step in enumerate(steps, 1):
        if step.role is StepRole.STOP:
            return f"step {number} stops them"
    return "no step of this runbook stops them"


@dataclass(frozen=True)
class Frame:
    """What a runbook says around its steps, per kind of facts: both render through it."""

    title: str
    header: list[str]
    protocol: str  # the script's PROTOCOL: which group tool it runs
    workdir: str  # the work directory's default name
    change_id: str  # what the work directory's progress belongs to


def _frame(f: Facts, steps: Sequence[Step], version: str, generated: str) -> Frame:
    if isinstance(f, GroupsFacts):
        return Frame(
            f"Runbook: {f.topic} to {f.to} partitions, in order for its consumer groups",
            _groups_header(f, version, generated),
            "consumer",
            f"migcheck-runbook-{path_component(f.topic)}-p{f.to}",
            f"groups {f.topic} {f.partitions}->{f.to} {','.join(f.group_ids)}"
            + (" online" if f.strategy is Strategy.ONLINE else ""),
        )
    return Frame(
        f"Runbook: {listing(f.topics)} to {f.to} partitions under {listing(f.apps)}",
        _header(f, steps, version, generated),
        f.protocol,
        f"migcheck-runbook-{path_component(f.app_id)}",
        _change_id(f),
    )


def _groups_header(f: GroupsFacts, version: str, generated: str) -> list[str]:
    found = "found by their committed offsets on it" if f.discovered else "named by --group"
    how = (
        migrate_in_brief(f"{f.topic}-p{f.to}")
        if f.strategy is Strategy.ONLINE
        else "pause the producers, let every group read everything, alter, wait until every "
        "group owns the new partitions and holds an offset on each, resume."
    )
    lines = [
        f"Widen {f.topic} ({f.partitions} -> {f.to} partitions) without breaking per-key "
        f"order for its consumer groups ({found}): {how}",
        f"Written by migcheck {version} on {generated} from the cluster at {f.bootstrap}.",
    ]
    for g in f.groups:
        lag = "no committed offsets" if g.lag is None else f"lag {g.lag}"
        line = f"{g.group}: {plural(g.members, 'member')}, {lag} on {f.topic}."
        if not g.members and g.lag:
            line += " WARNING: it has no members, so it never drains: start it before step 3."
        if g.group in f.accept_loss_risk:
            line += (
                " Its loss risk is accepted (--accept-loss-risk): if its members commit no "
                "offset on a new partition in time, the runbook goes on, and it reads that "
                "partition as its auto.offset.reset says (latest skips the first records)."
            )
        lines.append(line)
    return lines


def render_runbook_markdown(result: Runbook | SplitRefusal) -> str:
    """What ``migcheck runbook --format markdown`` writes: the runbook, or its refusal."""
    if isinstance(result, SplitRefusal):
        return render_refusal(result, "markdown")
    header = result.header
    return render_markdown(
        result.facts, result.steps, header["migcheck_version"], header["generated_at"]
    )


def render_runbook_sh(result: Runbook | SplitRefusal) -> str:
    """What ``migcheck runbook --format sh`` writes: the script, or one that only fails."""
    if isinstance(result, SplitRefusal):
        return render_refusal(result, "sh")
    header = result.header
    return render_sh(result.facts, result.steps, header["migcheck_version"], header["generated_at"])


def render_markdown(f: Facts, steps: Sequence[Step], version: str, generated: str) -> str:
    """The procedure for a change ticket; every command as an operator would type it.
    Every line of text is :func:`~migcheck.untrusted.markdown`: it names groups and apps."""
    frame = _frame(f, steps, version, generated)
    out = [f"# {markdown(frame.title)}", ""]
    out += [*(f"> {markdown(line)}" for line in frame.header), ""]
    for number, step in enumerate(steps, start=1):
        out += [f"## {number}. {markdown(step.title)}", "", markdown(step.why), ""]
        if step.destructive:
            out += ["Destructive: run it once.", ""]
        for action in step.actions:
            out += _md_action(action)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_action(action: Run | Manual | Check) -> list[str]:
    if isinstance(action, Manual):
        return [f"- [ ] **Manual:** {markdown(action.text)}", ""]
    if isinstance(action, Check):
        shown = [] if action.shown is None else _md_action(action.shown)
        return [f"- [ ] **Check:** {markdown(action.text)}", "", *shown]
    return [*md_fence([" ".join(_md_arg(a) for a in action.argv)], "sh"), ""]


def render_sh(f: Facts, steps: Sequence[Step], version: str, generated: str) -> str:
    """The procedure as a bash script (see the module docstring).  Names reach it only
    as :func:`~migcheck.untrusted.sh_word` or in a :func:`~migcheck.untrusted.sh_comment`."""
    frame = _frame(f, steps, version, generated)
    out = ["#!/usr/bin/env bash", *(f"# {sh_comment(line)}" for line in frame.header)]
    out += [
        "# Usage: bash runbook.sh [--execute] [--yes]",
        "set -euo pipefail",
        "",
        f"BOOTSTRAP={sh_word(f.bootstrap)}",
        f"COMMAND_CONFIG={sh_word(f.command_config or '')}",
        f"PROTOCOL={sh_word(frame.protocol)}",
        f'WORKDIR="${{MIGCHECK_RUNBOOK_DIR:-{frame.workdir}}}"',
        f"RUNBOOK_ID={sh_word(visible(frame.change_id))}",
        prelude(),
    ]
    for number, step in enumerate(steps, start=1):
        out += ["", f"step {number} {sh_word(visible(step.title))}"]
        out += [f"if already_done step-{number}; then", "  say '  done before: skipped'", "else"]
        out += [f"  {_sh_action(a)}" for a in step.actions] + [f"  mark_done step-{number}", "fi"]
    out += ["", "finish", ""]
    return "\n".join(out)


def _change_id(f: RunbookFacts) -> str:
    """What a work directory's progress belongs to: the same change resumes, another refuses."""
    topics = ",".join(f"{w.topic} {w.partitions}->{f.to}" for w in f.widened)
    return f"{','.join(f.apps)} {topics} {f.strategy} {','.join(f.targets)}"


def _sh_action(action: Run | Manual | Check) -> str:
    if isinstance(action, Manual):
        return f"manual {sh_word(visible(action.text))}"
    if isinstance(action, Check):
        args = " ".join(_sh_arg(a) for a in action.args)
        return f"{'probe' if action.dry_run else 'check'} {action.function} {args}".rstrip()
    args = " ".join(_sh_arg(a) for a in action.argv[1:])  # an empty value stays: ''
    name = action.argv[0]
    via = action.via or (ShellHelper.KAFKA_TOOL if action.kafka_tool else "")
    return f"run {via + ' ' if via else ''}{name} {args}".rstrip()


#: The script's shell functions, shipped as package data so shellcheck reads them alone.
PRELUDE_FILE = "runbook_prelude.sh"


def prelude() -> str:
    """The shell functions every script defines, without the file's header comment.

    Read at render time from the package (``importlib.resources``), so an installed
    wheel and a source tree write the same script.  The header (its comment lines up to
    the first empty line) speaks to shellcheck and to a reader of the file, not of the
    script; the empty line after it stays, to set the functions apart from the variables.
    """
    text = resources.files("migcheck.report").joinpath(PRELUDE_FILE).read_text(encoding="utf-8")
    lines = text.split("\n")
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return "\n".join(lines[header:]).rstrip("\n")


# --- the refusal of an in-place change that splits state ----------------------------


def render_refusal(refusal: SplitRefusal, fmt: str) -> str:
    """Why ``--strategy in-place`` is refused: the stores that read the topic directly and
    every key whose history would split; as ``sh``, a script that only prints it (in
    comments) and fails."""
    topic, to, stores, keys = refusal.topic, refusal.to, refusal.stores, refusal.keys
    lines = [
        f"Refused: --strategy in-place for {topic} -> {to} partitions under {refusal.app_id}.",
        f"migcheck app says {refusal.verdict}. {_stores_phrase(stores)} {topic} directly: after an "
        "in-place alter and a reset, each moved key's old records stay in its old partition "
        "while its new records go to the new one, so the reprocess splits its history over "
        "two tasks.",
        f"{len(keys)} keys of {topic} would split (below). Use --strategy new-topic (or "
        "auto), or pass --accept-split-history to write the in-place runbook anyway.",
        "",
        *keys,
    ]
    escape = (lambda line: f"# {sh_comment(line)}") if fmt == "sh" else markdown
    body = [escape(line).rstrip() for line in lines]
    if fmt == "sh":
        body = ["#!/usr/bin/env bash", *body, "echo 'refused: see the comments' >&2", "exit 1"]
    return "\n".join(body) + "\n"


#: What splits when the model may miss the store that reads the topic (``stores`` None).
_UNSEEN = "state migcheck cannot see without --topology"


def _stores_phrase(stores: tuple[str, ...] | None) -> str:
    if stores is None:
        return f"The {_UNSEEN} may read"
    if len(stores) == 1:
        return f"The store {stores[0]} reads"
    return f"The stores {', '.join(stores)} read"


def refusal_line(topic: str, stores: tuple[str, ...] | None, keys: Sequence[str]) -> str:
    """The refusal's one line for stderr."""
    where = _UNSEEN if stores is None else ", ".join(stores)
    return (
        f"refused --strategy in-place: {len(keys)} keys of {topic} would split their "
        f"history in {where} (listed in the output); use --strategy new-topic "
        "or --accept-split-history"
    )
