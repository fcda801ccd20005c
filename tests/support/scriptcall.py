"""One of a generated runbook script's shell functions run alone, as the unit tests run
them: the script sourced (its steps only printed: no --execute), then the function called
with Kafka's tools behind a fake that answers from files."""

from __future__ import annotations

import subprocess
from pathlib import Path


def call_function(
    script: Path, tool: Path, fake: Path, work: Path, *call: str
) -> subprocess.CompletedProcess[str]:
    """``call`` (a function of the script's and its arguments) with ``tool`` as
    $MIGCHECK_KAFKA_TOOL, ``fake`` as $FAKE (its canned answers) and ``work`` as the
    script's work directory; its exit code, stdout and stderr."""
    sourced = 'args=("$@"); set --; source "$RUNBOOK" > /dev/null; "${args[@]}"'
    return subprocess.run(
        ["bash", "-c", sourced, "bash", *call],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "RUNBOOK": str(script),
            "FAKE": str(fake),
            "MIGCHECK_KAFKA_TOOL": str(tool),
            "MIGCHECK_RUNBOOK_DIR": str(work),
        },
        timeout=60,
    )
