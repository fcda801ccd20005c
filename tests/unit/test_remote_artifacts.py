"""The launcher a Spark Connect session's workers run (``remote_artifacts``), run for real
by ``/bin/sh`` as a session's directory holds it: two archives unpacked side by side."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from migcheck.analysis import remote_artifacts
from migcheck.analysis.remote_sessions import Slot
from migcheck.errors import MigcheckError


def _session_with_launcher(tmp_path: Path, executable: str) -> Path:
    """A session's directory: the launcher's archive unpacked under its own name, and a
    module in the directory the launcher names for the archive of migcheck."""
    archive = remote_artifacts.launcher_archive(tmp_path, "migcheck-deps-k1", executable)
    session = tmp_path / "session"
    with tarfile.open(archive) as tar:
        tar.extractall(session / archive.name.removesuffix(".tar.gz"), filter="tar")
    (session / "migcheck-deps-k1").mkdir()
    (session / "migcheck-deps-k1" / "shipped_here.py").write_text("WHERE = 'shipped'\n")
    return session / archive.name.removesuffix(".tar.gz") / remote_artifacts.LAUNCHER


def test_the_launcher_runs_the_workers_python_with_the_archive_first(tmp_path: Path) -> None:
    odd = tmp_path / "a python's 'name'"  # quoted for the shell, whatever the server says
    odd.symlink_to(sys.executable)
    launcher = _session_with_launcher(tmp_path, str(odd))
    assert os.access(launcher, os.X_OK)
    code = "import shipped_here, sys; print(shipped_here.WHERE, *sys.path[1:3])"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "/elsewhere"}
    out = subprocess.run([str(launcher), "-c", code], cwd="/", env=env, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    deps = str(launcher.parents[1] / "migcheck-deps-k1")
    assert out == ["shipped", deps, "/elsewhere"]  # the archive first, the server's own after


def test_a_python_the_workers_do_not_name_cannot_be_launched(tmp_path: Path) -> None:
    with pytest.raises(MigcheckError, match="run a Python whose path they do not report"):
        remote_artifacts.ship(None, Slot("s"), "")
