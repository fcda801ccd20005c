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
``$KAFKA_HOME/bin/<tool>.sh``, else ``<tool>.sh`` or ``<tool>`` on PATH.
"""

from __future__ import annotations

import shlex

from migcheck.model.runbook import Check, Manual, Run, RunbookFacts, Step
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
        _PRELUDE,
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
    via = action.via or ("kafka_tool" if action.kafka_tool else "")
    return f"run {via + ' ' if via else ''}{name} {args}".rstrip()


_PRELUDE = r"""
EXECUTE=0
YES=0
for arg in "$@"; do
  case "$arg" in
    --execute) EXECUTE=1 ;;
    --yes) YES=1 ;;
    *) echo "usage: $0 [--execute] [--yes]" >&2; exit 2 ;;
  esac
done
if [ "$EXECUTE" = 1 ]; then
  mkdir -p "$WORKDIR"
  if [ ! -f "$WORKDIR/runbook.id" ]; then
    printf '%s\n' "$RUNBOOK_ID" > "$WORKDIR/runbook.id"
  elif [ "$(cat "$WORKDIR/runbook.id")" != "$RUNBOOK_ID" ]; then
    echo "$WORKDIR holds the progress of another change ($(cat "$WORKDIR/runbook.id")):" \
      "move it away or set MIGCHECK_RUNBOOK_DIR" >&2
    exit 1
  fi
fi

say() { printf '%s\n' "$*"; }
step() { say ''; say "== Step $1: $2"; }
# A command as it runs, quoted only where the shell needs it.
show() {
  local out='  $' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then out+=" $a"; else out+=" ${a@Q}"; fi
  done
  say "$out"
}

# Kafka's tools: $MIGCHECK_KAFKA_TOOL NAME ARGS..., $KAFKA_HOME/bin/NAME.sh, NAME.sh, NAME.
kafka_tool() {
  local name=$1
  shift
  if [ -n "${MIGCHECK_KAFKA_TOOL:-}" ]; then
    local -a tool
    read -r -a tool <<< "$MIGCHECK_KAFKA_TOOL"
    "${tool[@]}" "$name" "$@"
  elif [ -n "${KAFKA_HOME:-}" ]; then
    "$KAFKA_HOME/bin/$name.sh" "$@"
  elif command -v "$name.sh" > /dev/null 2>&1; then
    "$name.sh" "$@"
  else
    "$name" "$@"
  fi
}

# Client settings stay in the --command-config file; only its path is passed on.
config_args() {
  if [ -n "$COMMAND_CONFIG" ]; then printf '%s\n' "$1" "$COMMAND_CONFIG"; fi
}

run() {
  show "$@"
  if [ "$EXECUTE" = 1 ]; then "$@"; fi
}

manual() {
  say "  MANUAL: $1"
  if [ "$EXECUTE" = 1 ] && [ "$YES" != 1 ]; then
    local answer=""
    read -r answer || true
    if [ "$answer" != y ]; then
      say "  stopped at a manual step; run the script again to go on" >&2
      exit 1
    fi
  fi
}

check() {
  local name=$1
  shift
  say "  CHECK: $name $*"
  if [ "$EXECUTE" = 1 ]; then "$name" "$@"; fi
}

already_done() { [ "$EXECUTE" = 1 ] && [ -f "$WORKDIR/$1.done" ]; }
mark_done() { if [ "$EXECUTE" = 1 ]; then : > "$WORKDIR/$1.done"; fi; }
fail() { say "  FAILED: $*" >&2; exit 1; }

topics_tool() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-topics --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
}

# The partition count of a topic, or nothing when it does not exist.
partition_count() {
  { topics_tool --describe --topic "$1" 2> /dev/null || true; } \
    | sed -n 's/.*PartitionCount: *\([0-9]*\).*/\1/p' | head -n 1
}

history_intact() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  local lost
  lost=$(kafka_tool kafka-get-offsets --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" \
    --topic "$1" --time -2 | awk -F: '$NF != 0' | head -n 3)
  if [ -n "$lost" ]; then
    say "  WARNING: $1 no longer holds its full history; the reprocess will lose data: $lost"
  fi
}

record_offsets() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-get-offsets --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" \
    --topic "$1" --time -1 > "$WORKDIR/$2"
  say "  recorded in $WORKDIR/$2"
}

group_tool() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  if [ "$PROTOCOL" = streams ]; then
    kafka_tool kafka-streams-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
  else
    kafka_tool kafka-consumer-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
  fi
}

group_is_empty() {
  local out
  out=$(group_tool --describe --group "$APP_ID" --members 2>&1 || true)
  if ! grep -Eq 'has no active members|does not exist' <<< "$out"; then
    fail "the group $APP_ID still has members; stop every instance first"
  fi
}

ensure_topic() {
  local topic=$1 count=$2 like=$3
  shift 3
  local now
  now=$(partition_count "$topic")
  if [ -n "$now" ]; then
    [ "$now" = "$count" ] || fail "$topic exists with $now partitions, not $count"
    say "  $topic exists with $count partitions"
    return
  fi
  local rf
  rf=$(topics_tool --describe --topic "$like" \
    | sed -n 's/.*ReplicationFactor: *\([0-9]*\).*/\1/p' | head -n 1)
  local -a configs=()
  local c
  for c in "$@"; do configs+=(--config "$c"); done
  topics_tool --create --topic "$topic" --partitions "$count" \
    --replication-factor "${rf:-1}" "${configs[@]}"
}

ensure_partitions() {
  local now
  now=$(partition_count "$1")
  [ -n "$now" ] || fail "$1 does not exist"
  if [ "$now" = "$2" ]; then
    say "  $1 has $2 partitions"
  else
    topics_tool --alter --topic "$1" --partitions "$2"
  fi
}

wait_internal_topics() {
  local pair topic count now tries
  for pair in "$@"; do
    topic=${pair%=*}
    count=${pair##*=}
    for tries in $(seq 1 120); do
      now=$(partition_count "$topic")
      [ "$now" = "$count" ] && break
      [ -z "$now" ] || fail "$topic has $now partitions, not $count"
      [ "$tries" -lt 120 ] || fail "$topic did not come back within 240 s"
      sleep 2
    done
    say "  $topic: $count partitions"
  done
}

wait_lag_zero() {
  local tries lag
  for tries in $(seq 1 150); do
    lag=$({ group_tool --describe --group "$APP_ID" --offsets 2> /dev/null || true; } \
      | awk -v t="$1" '$2 == t { n++; if ($6 ~ /^[0-9]+$/) s += $6; else s += 1 }
                       END { if (n == 0) print "unknown"; else print s }')
    if [ "$lag" = 0 ]; then
      say "  lag on $1: 0"
      return
    fi
    [ "$tries" -lt 150 ] || fail "the lag on $1 is still $lag after 300 s"
    sleep 2
  done
}

# The reset tool, naming only the internal topics that still exist: it refuses a topic
# that is gone, and a re-run after a reset that deleted them and then failed must go on.
reset_tool() {
  local -a args=() kept=() wanted=()
  local t
  while (($#)); do
    if [ "$1" = --internal-topics ]; then
      IFS=, read -r -a wanted <<< "$2"
      for t in "${wanted[@]}"; do
        if [ -n "$(partition_count "$t")" ]; then kept+=("$t"); else say "  $t: deleted before"; fi
      done
      if ((${#kept[@]})); then args+=(--internal-topics "$(IFS=,; printf '%s' "${kept[*]}")"); fi
      shift 2
    else
      args+=("$1")
      shift
    fi
  done
  kafka_tool "${args[@]}"
}

app_is_healthy() {
  local out
  out=$(migcheck "$@") || fail "migcheck app: $out"
  grep -q 'Health today: every internal topic matches' <<< "$out" \
    || fail "migcheck app does not find the app healthy: $out"
  say "  migcheck app: healthy"
}"""


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
