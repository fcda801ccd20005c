"""Run a generated `sh` runbook for real, the way an operator runs it.

The script is run with ``--execute`` (and ``--yes`` when asked); its output is read line
by line, and at each ``MANUAL:`` step the :class:`Operator` does what a person would do
there: records arrive before the producers switch, the app restarts on the new topic.
Kafka's tools and migcheck can sit behind a fault injector (:func:`wrappers`) that makes
one command fail once after doing its work, so a test can prove that a re-run resumes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from connectserver import embedded
from kafkatest import KAFKA_LOCAL
from streamsapp import StreamsApp

#: The virtualenv's bin: the migcheck (and shellcheck) the tests run.
BIN = Path(sys.executable).parent

#: Runs the real command, then fails once if its command line matches $INJECT.
_WRAPPER = """#!{python}
import os, re, subprocess, sys
line = " ".join([*{name!r}, *sys.argv[1:]])
code = subprocess.call([*{real!r}, *sys.argv[1:]])
done = os.environ["INJECT_DONE"]
if code == 0 and re.search(os.environ.get("INJECT", "(?!)"), line) and not os.path.exists(done):
    open(done, "w").close()
    print("injected failure after: " + line, file=sys.stderr)
    sys.exit(1)
sys.exit(code)
"""


def wrappers(where: Path) -> dict[str, str]:
    """Kafka's tools and migcheck behind the fault injector: the script's environment."""
    (where / "bin").mkdir(parents=True)
    tools = where / "kafka-tool"
    tools.write_text(
        _WRAPPER.format(python=sys.executable, name=[], real=[str(KAFKA_LOCAL), "tool"])
    )
    migcheck = where / "bin" / "migcheck"
    migcheck.write_text(
        _WRAPPER.format(python=sys.executable, name=["migcheck"], real=[str(BIN / "migcheck")])
    )
    for f in (tools, migcheck):
        f.chmod(0o755)
    return {
        "MIGCHECK_KAFKA_TOOL": str(tools),
        "PATH": f"{where / 'bin'}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}",
    }


def plain_tools() -> dict[str, str]:
    """Kafka's tools and migcheck as they are, with nothing in between: the environment
    an operator's shell gives the script."""
    return {
        "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }


def run_script(
    script: Path,
    env: dict[str, str],
    at_manual: Callable[[str], bool] = lambda line: True,
    yes: bool = False,
    timeout: float = 900,
) -> tuple[int, str]:
    """Runs the script with ``--execute`` (``yes``: and ``--yes``, so it answers its own
    manual steps) in ``env``; at each ``MANUAL:`` line ``at_manual`` acts as the operator
    and says whether to answer ``y`` (else ``n``; not asked with ``--yes``).  The exit
    code and the output (stdout and stderr, in order); ``timeout`` only ends a hung run:
    the script is killed and the run fails."""
    proc = subprocess.Popen(
        ["bash", str(script), "--execute", *(["--yes"] if yes else [])],
        stdin=subprocess.DEVNULL if yes else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    seen: list[str] = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "MANUAL:" in line:
                answer = at_manual(line)
                if not yes:
                    assert proc.stdin is not None
                    proc.stdin.write("y\n" if answer else "n\n")
                    proc.stdin.flush()
        code = proc.wait(timeout=60)
    finally:
        watchdog.cancel()
    assert code != -9, f"the runbook hung for {timeout} s and was killed: {''.join(seen)}"
    return code, "".join(seen)


class Operator:
    """Runs the script with --execute and answers its manual steps as an operator would.

    ``late``: records produced to the old input at "Switch every producer", as the
    producers keep writing until they are switched.  ``close``: how the app restarted at
    "Start the application APP reading" closes (StreamsApp.command).  ``yes``: run with
    ``--yes``, as an operator who scripts the change does; the script then reads no
    answers, and the operator acts on the line while the script goes on, as a person
    starting the app from another terminal would.  ``inject``: put the fault injector
    between the script and the tools (:func:`wrappers`).
    """

    def __init__(
        self,
        script: Path,
        app: StreamsApp,
        work: Path,
        *,
        late: list[tuple[str, str]] | None = None,
        close: str = "leave",
        yes: bool = False,
        inject: bool = True,
    ) -> None:
        self.script, self.app, self.work = script, app, work
        self.late = late or []
        self.close = close
        self.yes = yes
        tools = wrappers(work.parent / "inject") if inject else plain_tools()
        self.env = {**os.environ, **tools}
        self.env["MIGCHECK_RUNBOOK_DIR"] = str(work)
        self.switched = False
        self.background: subprocess.Popen[str] | None = None

    def run(self, inject: str | None = None, timeout: float = 900) -> tuple[int, str]:
        """One run of the script: its exit code and its output (stdout and stderr, in
        order).  ``timeout`` only ends a hung run: the script is killed and the run fails."""
        env = {**self.env, "INJECT_DONE": str(self.work.parent / f"injected-{hash(inject)}")}
        if inject:
            env["INJECT"] = inject

        def at_manual(line: str) -> bool:
            declined = inject is not None and re.search(inject, line) is not None
            if not declined:
                self._act(line)
            return not declined

        return run_script(self.script, env, at_manual, yes=self.yes, timeout=timeout)

    def _act(self, line: str) -> None:
        if "MANUAL: Switch every producer" in line and not self.switched:
            if self.late:
                self.app.produce(self.app.input, self.late)
            self.switched = True
        elif f"MANUAL: Start the application {self.app.app_id} reading" in line and (
            self.background is None
        ):
            self.app.input = self.app.input + "-p6"
            self.background = subprocess.Popen(
                self.app.command(max_seconds=120, close=self.close),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    def done(self) -> None:
        """Waits for the app started at the restart step to finish its run."""
        if self.background is not None:
            self.background.wait(timeout=180)


def execute_yes(
    script: Path,
    app: StreamsApp,
    work: Path,
    base_env: dict[str, str] | None = None,
    switched: list[tuple[str, str]] | None = None,
) -> tuple[int, str, str]:
    """``--execute --yes``: the script answers its own manual steps; the operator still
    does what they ask (start the app when told) and the app's dump is kept.  ``base_env``
    (default this process's) names the Kafka whose tools the script runs.  ``switched``:
    records the producers write to ``app.input`` once the script switches them to it."""
    code, out, dumps = execute_yes_apps(script, [app], work, base_env, switched)
    return code, out, dumps.get(app.app_id, "")


def execute_yes_apps(
    script: Path,
    apps: Sequence[StreamsApp],
    work: Path,
    base_env: dict[str, str] | None = None,
    switched: list[tuple[str, str]] | None = None,
) -> tuple[int, str, dict[str, str]]:
    """:func:`execute_yes` for a runbook of several apps: each is started when its own
    restart step names it, and each one's dump is kept by its id.  One app is started at
    any start step (a moved app's names its new id)."""
    proc = subprocess.Popen(
        ["bash", str(script), "--execute", "--yes"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=_yes_env(work, base_env),
    )  # fmt: skip
    assert proc.stdout is not None
    seen: list[str] = []
    started: dict[str, subprocess.Popen[str]] = {}
    for line in proc.stdout:
        seen.append(line)
        if "MANUAL: Switch every producer" in line and switched:
            apps[0].produce(apps[0].input, switched)
            switched = None
        if "MANUAL: Start the application" not in line:
            continue
        for app in apps:
            named = re.search(
                rf"Start the application ({re.escape(app.app_id)}[ .]|with application\.id="
                rf"{re.escape(app.app_id)} )",
                line,
            )
            if app.app_id not in started and (named or len(apps) == 1):
                started[app.app_id] = subprocess.Popen(
                    app.command(max_seconds=150), stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, text=True,
                )  # fmt: skip
    code = proc.wait(timeout=600)
    dumps = {a: p.communicate(timeout=240)[0] for a, p in started.items()}
    return code, "".join(seen), dumps


def _yes_env(work: Path, base_env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a script run with ``--yes``: Kafka's tools and migcheck as they
    are, its progress in ``work``."""
    return {
        **(base_env if base_env is not None else os.environ),
        "MIGCHECK_KAFKA_TOOL": f"{KAFKA_LOCAL} tool",
        "MIGCHECK_RUNBOOK_DIR": str(work),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


class Detached:
    """The script run with ``--execute --yes`` in a session of its own, so that a test can
    signal the commands it runs (copykill's ``signal_session``: the script's copy and its
    Spark processes) while it runs; its output is drained on a thread, so that a full pipe
    never holds it up.  No manual step is acted on: for a run that stops before the app's
    restart."""

    def __init__(self, script: Path, work: Path) -> None:
        self.proc = subprocess.Popen(
            ["bash", str(script), "--execute", "--yes"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=embedded(_yes_env(work)), start_new_session=True,  # its Spark killed with it
        )  # fmt: skip
        self.seen: list[str] = []
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.seen.append(line)

    def wait(self, timeout: float = 120) -> tuple[int, str]:
        """The script's exit code and its whole output."""
        code = self.proc.wait(timeout=timeout)
        self._drain.join(timeout=30)
        return code, "".join(self.seen)
