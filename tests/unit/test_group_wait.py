"""The script's group_is_empty against what Kafka 4.3.1's tools really print.

Each canned output below is copied from a real run recorded in
fixtures/java/streams/FINDINGS.md ("After close()"): an empty classic group, an empty
streams group (whose ``--members`` view prints nothing at all, hence ``--state``), a
group that is gone, and a closed member still lingering.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from migcheck.frameworks.kafka_streams import steps
from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts
from migcheck.report.runbook import render_sh

EMPTY_CLASSIC = (  # stdout header and table, then stderr (the script reads 2>&1)
    "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS\n"
    "shop 127.0.0.1:45635  (1)      -                    Empty                0\n"
    "Consumer group 'shop' has no active members.\n"
)
EMPTY_STREAMS = (
    "Error: Streams group 'shop' has no active members.\n"
    "GROUP COORDINATOR (ID) STATE #MEMBERS\n"
    "shop 127.0.0.1:45635 (1)       Empty                     0\n"
)
GONE = (
    "Error: Executing consumer group command failed due to "
    "org.apache.kafka.common.errors.GroupIdNotFoundException: Group shop not found.\n"
)
LINGERING = (
    "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS\n"
    "shop 127.0.0.1:45635  (1)      stream               Stable               1\n"
)
OTHER_TYPE = (  # a group of the other type is there: not gone
    "Error: Executing streams group command failed due to "
    "org.apache.kafka.common.errors.GroupIdNotFoundException: Group shop is not a streams "
    "group.\n"
)

_FAKE_TOOL = '#!/bin/bash\n[[ " $* " == *" --state "* ]] || exit 3\nprintf "%s" "$FAKE_OUT"\n'


def _script(tmp_path: Path, protocol: str) -> Path:
    facts = RunbookFacts(
        app_id="shop", bootstrap="b:9092", command_config=None, topic="orders", partitions=3,
        to=6, new_topic="orders-p6", strategy="new-topic", protocol=protocol, internal=(),
        expected_internal={}, kind=ReaderKind.KAFKA_STREAMS,
    )  # fmt: skip
    script = tmp_path / "runbook.sh"
    script.write_text(render_sh(facts, steps(facts), "0", "now"), encoding="utf-8")
    return script


def _group_is_empty(tmp_path: Path, protocol: str, out: str, timeout: str = "0"):
    tool = tmp_path / "kafka-tool"
    tool.write_text(_FAKE_TOOL)
    tool.chmod(0o755)
    sourced = 'args=("$@"); set --; source "$RUNBOOK" > /dev/null; "${args[@]}"'
    return subprocess.run(
        ["bash", "-c", sourced, "bash", "group_is_empty", timeout, "shop"],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "RUNBOOK": str(_script(tmp_path, protocol)),
            "FAKE_OUT": out,
            "MIGCHECK_KAFKA_TOOL": str(tool),
            "MIGCHECK_RUNBOOK_DIR": str(tmp_path / "work"),
        },
        timeout=60,
    )


@pytest.mark.parametrize(
    ("protocol", "out"),
    [("classic", EMPTY_CLASSIC), ("streams", EMPTY_STREAMS), ("classic", GONE)],
)
def test_an_empty_or_gone_group_passes_at_once(tmp_path: Path, protocol: str, out: str) -> None:
    p = _group_is_empty(tmp_path, protocol, out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == "  the group shop has no members\n"


@pytest.mark.parametrize("out", [LINGERING, OTHER_TYPE])
def test_members_that_outlast_the_wait_are_refused_with_the_reason(
    tmp_path: Path, out: str
) -> None:
    p = _group_is_empty(tmp_path, "classic", out, timeout="2")
    assert p.returncode == 1
    assert "still has members: waiting up to 2 s (--group-timeout) for a stopped" in p.stdout
    assert p.stderr.strip() == (
        "FAILED: the group shop still has members; stop every instance first "
        "(waited 2 s, --group-timeout)"
    )
