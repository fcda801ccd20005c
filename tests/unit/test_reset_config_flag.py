"""The script's reset_tool passes the config file with the flag the installed reset tool
takes, asked of its ``--help`` once.

The ``--help`` texts under ``data/`` are what the real tools print (on stderr, exit 1),
captured from Apache Kafka's own jars: 3.9.2 and 4.3.1 through ``scripts/kafka-local
tool kafka-streams-application-reset --help`` against a broker started with ``--version``,
4.1.1 and 4.2.1 by running ``org.apache.kafka.tools.StreamsResetter --help`` from those
releases' Maven Central jars.  3.9.2 and 4.1.1 list only ``--config-file`` (and refuse
``--command-config``: "command-config is not a recognized option"); 4.2.1 and 4.3.1 list
``--command-config`` and ``--config-file`` as "(DEPRECATED) ... Use --command-config
instead", which still works there with a warning on stderr.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from migcheck.frameworks.kafka_streams import steps
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts
from migcheck.report.runbook import render_markdown, render_sh

DATA = Path(__file__).parent / "data"
CONFIG = "/etc/kafka/client admin.properties"

#: The reset tool: --help prints the captured text on stderr and exits 1, as the real
#: one does; every call is recorded (--help as "help"), one argument a line, and any
#: other call succeeds.
_FAKE_TOOL = """#!/bin/bash
name=$1
shift
if [ "$name" = kafka-streams-application-reset ] && [ "$*" = --help ]; then
  printf 'help\n--\n' >> "$CALLS"
  cat "$FAKE_HELP" >&2
  exit 1
fi
printf '%s\\n' "$name" "$@" '--' >> "$CALLS"
"""


def _facts(command_config: str | None = CONFIG) -> RunbookFacts:
    return RunbookFacts(
        app_id="shop", bootstrap="b:9092", command_config=command_config, topic="orders",
        partitions=3, to=6, new_topic="orders-p6", strategy="new-topic", protocol="classic",
        internal=(), expected_internal={}, kind=ReaderKind.KAFKA_STREAMS,
    )  # fmt: skip


def _reset_twice(tmp_path: Path, help_file: Path | None, facts: RunbookFacts):
    """The script's reset_tool run as its dry run and its reset run it (both in one
    shell), with the commands the steps wrote: (exit, stdout, the tool's calls)."""
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, steps(facts), "0", "now"), encoding="utf-8")
    tool = tmp_path / "kafka-tool"
    tool.write_text(_FAKE_TOOL)
    tool.chmod(0o755)
    calls = tmp_path / "calls"
    reset = next(s for s in steps(facts) if s.title == "Reset the application")
    dry, real = (a.argv for a in reset.actions[1:])
    sourced = (
        'n=$1; shift; dry=("${@:1:n}"); real=("${@:n+1}"); set --; '
        'source "$RUNBOOK" > /dev/null; reset_tool "${dry[@]}"; reset_tool "${real[@]}"'
    )
    p = subprocess.run(
        ["bash", "-c", sourced, "bash", str(len(dry)), *dry, *real],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "RUNBOOK": str(script),
            "FAKE_HELP": str(help_file or tmp_path / "no-such-help"),
            "CALLS": str(calls),
            "MIGCHECK_KAFKA_TOOL": str(tool),
            "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work"),
        },
        timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout, calls.read_text().split("--\n")[:-1] if calls.exists() else []


def _config_flags(call: str) -> list[str]:
    argv = call.splitlines()
    return [a for i, a in enumerate(argv[:-1]) if argv[i + 1] == CONFIG]


@pytest.mark.parametrize(
    ("version", "flag"),
    [
        ("3.9.2", "--config-file"),
        ("4.1.1", "--config-file"),
        ("4.2.1", "--command-config"),
        ("4.3.1", "--command-config"),
    ],
)
def test_the_reset_gets_the_flag_its_help_lists(tmp_path: Path, version: str, flag: str) -> None:
    help_file = DATA / f"streams-reset-help-{version}.txt"
    out, calls = _reset_twice(tmp_path, help_file, _facts())
    # --help asked once, before the dry run; then the dry run and the reset
    assert len(calls) == 3 and calls[0] == "help\n", calls
    dry, real = calls[1:]
    assert [_config_flags(c) for c in (dry, real)] == [[flag], [flag]]
    assert "--dry-run" in dry.splitlines() and "--dry-run" not in real.splitlines()
    said = "  this kafka-streams-application-reset takes --command-config, not --config-file"
    assert out.count(said) == (2 if flag == "--command-config" else 0), out


def test_a_tool_that_cannot_say_gets_the_flag_every_version_accepts(tmp_path: Path) -> None:
    _, calls = _reset_twice(tmp_path, None, _facts())  # --help prints nothing
    assert calls[0] == "help\n" and len(calls) == 3, calls
    assert [_config_flags(c) for c in calls[1:]] == [["--config-file"], ["--config-file"]]


def test_without_a_command_config_the_tool_is_never_asked(tmp_path: Path) -> None:
    _, calls = _reset_twice(tmp_path, DATA / "streams-reset-help-4.3.1.txt", _facts(None))
    assert len(calls) == 2 and "help\n" not in calls, calls
    assert not any("--config-file" in c or "--command-config" in c for c in calls)


def test_the_captured_help_texts_list_what_the_pick_relies_on() -> None:
    def options(version: str) -> set[str]:
        text = (DATA / f"streams-reset-help-{version}.txt").read_text()
        return {line.split()[0] for line in text.splitlines() if line.startswith("--")}

    for version in ("3.9.2", "4.1.1"):
        assert "--config-file" in options(version)
        assert "--command-config" not in options(version)
    for version in ("4.2.1", "4.3.1"):
        assert {"--config-file", "--command-config"} <= options(version)


def test_markdown_says_the_flag_depends_on_the_tool_version() -> None:
    md = render_markdown(_facts(), steps(_facts()), "0", "now")
    reset = md[md.index("Reset the application") :]
    assert "Kafka 4.2 and later take --command-config" in reset
    assert "3.x to 4.1 know only --config-file" in reset
    assert f"--config-file '{CONFIG}'" in reset
    bare = render_markdown(_facts(None), steps(_facts(None)), "0", "now")
    assert "--command-config" not in bare and "--config-file" not in bare
