"""The runbook's steps written out: Markdown for the change ticket, a script to run.

The script (``--format sh``) prints every step and acts only with
``--execute``; it stops at each manual step for a ``y`` on stdin unless
``--yes`` answers them in advance.  A re-run after a failure resumes at the
failed step: each step that succeeds leaves a marker in the work directory,
so the reset and the state wipe never run twice, and the stop is not asked
for again once the app has restarted.  The failed step itself runs again from
its start, so each of its actions can repeat: checks only read, topic creation
and the copy see what already exists.  The work directory belongs to one
change (its id is recorded there); a script for another change refuses it.  Secrets stay in the
``--command-config`` file, which the script only names.  Kafka's tools come from
``$MIGCHECK_KAFKA_TOOL`` (a command taking the tool's name), else
``$KAFKA_HOME/bin/<tool>.sh``, else ``<tool>.sh`` or ``<tool>`` on PATH.  The script's
shell functions are ``runbook_prelude.sh`` beside this module, a file shellcheck reads.
"""

from __future__ import annotations

import shlex
from importlib import resources

from migcheck.model.runbook import Check, Manual, Run, RunbookFacts, ShellHelper, Step
from migcheck.words import plural

#: Arguments naming a file in the script's work directory start with this.
_IN_WORKDIR = "@"


def _md_arg(arg: str) -> str:
    return shlex.quote(f"<workdir>/{arg[1:]}" if arg.startswith(_IN_WORKDIR) else arg)


def _sh_arg(arg: str) -> str:
    if arg.startswith(_IN_WORKDIR):
        return f'"$WORKDIR"/{shlex.quote(arg[1:])}'
    return shlex.quote(arg)


def _header(f: RunbookFacts, version: str, generated: str) -> list[str]:
    target = f"{f.new_topic} ({f.to} partitions)" if f.target != f.topic else f"{f.to} partitions"
    lines = [
        f"Widen {f.topic} ({f.partitions} -> {f.to} partitions) under the Kafka Streams "
        f"application {f.app_id}, strategy {f.strategy}: the app ends up reading {target}.",
        f"migcheck app verdict for the in-place change: {f.verdict}.",
        f"Written by migcheck {version} on {generated} from the cluster at {f.bootstrap}.",
    ]
    if f.history_lost:
        lines.insert(
            0,
            "WARNING: the reprocess will lose data: "
            + ", ".join(f.history_lost)
            + " no longer hold their full history (log start offset above 0).",
        )
    if f.members:
        lines.append(f"The group has {plural(f.members, 'member')} now: step 2 stops them.")
    return lines


def render_markdown(f: RunbookFacts, steps: list[Step], version: str, generated: str) -> str:
    """The procedure for a change ticket; every command as an operator would type it."""
    out = [f"# Runbook: {f.topic} to {f.to} partitions under {f.app_id}", ""]
    out += [*(f"> {line}" for line in _header(f, version, generated)), ""]
    for number, step in enumerate(steps, start=1):
        out += [f"## {number}. {step.title}", "", step.why, ""]
        if step.destructive:
            out += ["Destructive: run it once.", ""]
        for action in step.actions:
            out += _md_action(action)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_action(action: Run | Manual | Check) -> list[str]:
    if isinstance(action, Manual):
        return [f"- [ ] **Manual:** {action.text}", ""]
    if isinstance(action, Check):
        shown = [] if action.shown is None else _md_action(action.shown)
        return [f"- [ ] **Check:** {action.text}", "", *shown]
    return ["```sh", " ".join(_md_arg(a) for a in action.argv), "```", ""]


def render_sh(f: RunbookFacts, steps: list[Step], version: str, generated: str) -> str:
    """The procedure as a bash script (see the module docstring)."""
    out = ["#!/usr/bin/env bash", *(f"# {line}" for line in _header(f, version, generated))]
    out += [
        "# Usage: bash runbook.sh [--execute] [--yes]",
        "set -euo pipefail",
        "",
        f"BOOTSTRAP={shlex.quote(f.bootstrap)}",
        f"COMMAND_CONFIG={shlex.quote(f.command_config or '')}",
        f"APP_ID={shlex.quote(f.app_id)}",
        f"PROTOCOL={shlex.quote(f.protocol)}",
        f'WORKDIR="${{MIGCHECK_RUNBOOK_DIR:-migcheck-runbook-{_safe(f.app_id)}}}"',
        f"RUNBOOK_ID={shlex.quote(_change_id(f))}",
        prelude(),
    ]
    for number, step in enumerate(steps, start=1):
        out += ["", f"step {number} {shlex.quote(step.title)}"]
        out += [f"if already_done step-{number}; then", "  say '  done before: skipped'", "else"]
        out += [f"  {_sh_action(a)}" for a in step.actions] + [f"  mark_done step-{number}", "fi"]
    out += ["", "say ''", "say 'Runbook complete.'", ""]
    return "\n".join(out)


def _change_id(f: RunbookFacts) -> str:
    """What a work directory's progress belongs to: the same change resumes, another refuses."""
    return f"{f.app_id} {f.topic} {f.partitions}->{f.to} {f.strategy} {f.target}"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def _sh_action(action: Run | Manual | Check) -> str:
    if isinstance(action, Manual):
        return f"manual {shlex.quote(action.text)}"
    if isinstance(action, Check):
        args = " ".join(_sh_arg(a) for a in action.args)
        return f"check {action.function} {args}".rstrip()
    args = " ".join(_sh_arg(a) for a in action.argv[1:] if a)
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


def render_refusal(app_id: str, topic: str, to: int, level: str, keys: list[str], fmt: str) -> str:
    """Why ``--strategy in-place`` is refused, with every key whose history would split;
    as ``sh``, a script that only prints it (in comments) and fails."""
    lines = [
        f"Refused: --strategy in-place for {topic} -> {to} partitions under {app_id}.",
        f"migcheck app says {level}: the app keeps state per key. After an in-place alter and "
        "a reset, each moved key's old records stay in its old partition while its new "
        "records go to the new one, so the reprocess splits its history over two tasks.",
        f"{len(keys)} keys would split (below). Use --strategy new-topic, or pass "
        "--accept-split-history to write the in-place runbook anyway.",
        "",
        *keys,
    ]
    comment = "# " if fmt == "sh" else ""
    body = [f"{comment}{line}".rstrip() for line in lines]
    if fmt == "sh":
        body = ["#!/usr/bin/env bash", *body, "echo 'refused: see the comments' >&2", "exit 1"]
    return "\n".join(body) + "\n"


def refusal_line(topic: str, keys: list[str]) -> str:
    """The refusal's one line for stderr."""
    return (
        f"refused --strategy in-place: {len(keys)} keys of {topic} would split their "
        "history (listed in the output); use --strategy new-topic or --accept-split-history"
    )
