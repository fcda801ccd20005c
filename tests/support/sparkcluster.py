"""A real Spark standalone cluster on loopback, whose workers cannot see the driver's files.

migcheck on a cluster must ship itself to the executors: a test where the executors
share the driver's virtualenv would pass even if nothing were shipped.  So the
cluster runs as separate hosts would:

- its master and workers are Spark's own daemons, started with ``bin/spark-class``
  of a *second* virtualenv that holds PySpark's requirements only (pyspark, pandas,
  pyarrow, numpy: no migcheck, numba, kafka-python, mmh3), built once with the
  driver's base interpreter under the state directory and reused while its pyspark
  version matches the driver's;
- each worker runs in a mount namespace of its own (``unshare -m``) in which an empty
  directory is bind-mounted over the driver's virtualenv, the repository's
  ``migcheck/`` package, migcheck's cache and pytest's temporary directories, so
  an executor that reads any of them finds nothing;
- the workers get a clean environment: PATH (the worker venv first, so ``python3``
  is its interpreter), HOME, JAVA_HOME and Spark's own variables, nothing else of the
  driver's (no PYTHONPATH, no PYSPARK_*).

Readiness is read from the master's own JSON state (``/json/``: its workers and their
state), never from a sleep.  Every daemon is started in a session of its own and
stopped by killing every process of that session (executors and their Python workers
included), then checked gone.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from kafkatest import QUICK_JVM, locked

#: What the workers' virtualenv holds besides pyspark itself: PySpark's own requirements
#: for Arrow UDFs and mapInArrow, bounded as the project bounds them.
PYSPARK_REQUIREMENTS = ("pandas>=2.2,<3", "pyarrow", "numpy")
#: Seconds a daemon may take to be listed ALIVE by the master (two cores, cold JVMs).
READY_TIMEOUT_S = 180.0
MARKER = "migcheck-test-venv.json"
#: An executor's log line for a task it starts, and the task's stage.
RUNNING_TASK = re.compile(r"Running task (\d+)\.\d+ in stage (\d+)\.")


class ClusterError(RuntimeError):
    """The cluster (or a virtualenv it needs) could not be built, started or stopped."""


# ---------------------------------------------------------------- virtualenvs


def pyspark_version() -> str:
    """The driver's pyspark version: the cluster must run exactly this Spark."""
    return metadata.version("pyspark")


def base_python() -> str:
    """The interpreter the driver's virtualenv was made from (``sys._base_executable``),
    so the workers run the same Python build without the driver's packages."""
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [getattr(sys, "_base_executable", ""), os.path.join(sys.base_prefix, "bin", minor)]
    for c in candidates:
        if c and os.path.isfile(c) and not _inside(Path(c), Path(sys.prefix), venv_only=True):
            return c
    raise ClusterError(f"cannot find the base interpreter of {sys.executable}")


def _inside(path: Path, root: Path, venv_only: bool = False) -> bool:
    if venv_only and sys.prefix == sys.base_prefix:
        return False  # not a virtualenv: the base interpreter is the driver's own
    return path.resolve().is_relative_to(root.resolve())


def other_minor_python() -> str | None:
    """A CPython 3.10+ of another minor version than the driver's: ``$MIGCHECK_TEST_OTHER_PYTHON``,
    else pyenv's versions, else ``python3.N`` binaries on PATH (real ones, not pyenv shims)."""
    if os.environ.get("MIGCHECK_TEST_OTHER_PYTHON"):
        return os.environ["MIGCHECK_TEST_OTHER_PYTHON"]
    mine = sys.version_info.minor
    minors = sorted({12, 13, 10, 14} - {mine}, key=lambda m: (m != mine + 1, m))
    pyenv = Path(os.environ.get("PYENV_ROOT", "~/.pyenv")).expanduser() / "versions"
    for m in minors:
        for exe in sorted(pyenv.glob(f"3.{m}.*/bin/python3.{m}"), reverse=True):
            return str(exe)
        found = shutil.which(f"python3.{m}")
        if found and "shims" not in found:
            return found
    return None


def ensure_venv(
    path: Path, python: str, requirements: Sequence[str], uv_if_there: bool = True
) -> Path:
    """A virtualenv at ``path`` made by ``python`` holding exactly ``requirements``.

    Reused when its marker records the same interpreter version and requirements
    (pip's wheel cache makes a rebuild a matter of seconds); a lock keeps two test
    sessions from building it at once.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    wanted = {"python": _python_version(python), "requirements": list(requirements)}
    with locked(path.with_name(path.name + ".lock")):
        if _marker(path) == wanted and (path / "bin" / "python").exists():
            return path
        shutil.rmtree(path, ignore_errors=True)
        _install(path, python, requirements, uv_if_there)
        (path / MARKER).write_text(json.dumps(wanted), encoding="utf-8")
    return path


def _install(path: Path, python: str, requirements: Sequence[str], uv_if_there: bool) -> None:
    """uv where the test extra installed it, else venv and pip.  uv installs pandas,
    pyarrow and numpy far faster (a Python 3.12 workers' virtualenv: 21 s against pip's
    41 s) but builds pyspark's source distribution again each time (17 s), where pip
    reuses the wheel it built once: pyspark alone takes pip 6.5 s, uv 19 s
    (docs/development.md)."""
    uv = Path(sys.executable).with_name("uv")
    if uv_if_there and uv.exists():
        _checked([str(uv), "venv", "-q", "--python", python, str(path)], "uv venv")
        into = ["--python", str(path / "bin" / "python")]
        _checked([str(uv), "pip", "install", "-q", *into, *requirements], "uv pip install", 900)
        return
    _checked([python, "-m", "venv", str(path)], "python -m venv")
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q"]
    _checked([*pip, "--disable-pip-version-check", *requirements], "pip install", 900)


def workers_venv(state: Path, python: str | None = None) -> Path:
    """The workers' interpreter: the driver's Python minor version unless ``python`` says
    otherwise, PySpark's requirements, the driver's pyspark."""
    python = python or base_python()
    version, name = pyspark_version(), _tag(python)
    requirements = [f"pyspark=={version}", *PYSPARK_REQUIREMENTS]
    return ensure_venv(state / "spark-cluster" / f"workers-{name}-pyspark{version}", python,
                       requirements)  # fmt: skip


def pyspark_only_venv(state: Path) -> Path:
    """The driver's Python with pyspark and nothing else (no pandas, pyarrow, numpy)."""
    python, version = base_python(), pyspark_version()
    path = state / "spark-cluster" / f"pyspark-only-{_tag(python)}-pyspark{version}"
    return ensure_venv(path, python, [f"pyspark=={version}"], uv_if_there=False)  # pip: faster


def _tag(python: str) -> str:
    return "py" + _python_version(python)


def _python_version(python: str) -> str:
    out = _checked([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], python)
    return out.strip()


def _marker(path: Path) -> object:
    try:
        return json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _checked(cmd: Sequence[str], what: str, timeout: float = 120) -> str:
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ClusterError(f"{what} failed: {e}") from None
    if p.returncode != 0:
        raise ClusterError(f"{what} failed (exit {p.returncode}): {p.stderr[-2000:]}")
    return p.stdout


def site_packages_pyspark(venv: Path) -> Path:
    """The pyspark package inside ``venv``: a whole Spark install (jars, bin, sbin)."""
    found = sorted(venv.glob("lib/python3.*/site-packages/pyspark"))
    if not found:
        raise ClusterError(f"{venv} has no pyspark")
    return found[0]


# ---------------------------------------------------------------- hiding


def migcheck_cache() -> Path:
    """migcheck's cache on the driver (shipped archives, class archive):
    as the CLI resolves it, so the workers cannot read what was cached for the driver."""
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(os.environ.get("MIGCHECK_CACHE_DIR") or os.path.join(xdg, "migcheck"))


def driver_paths(repo: Path, *extra: Path) -> list[Path]:
    """What a separate host would not have: the driver's virtualenv (``sys.prefix``, when
    the tests run in one), the repository's ``migcheck/`` package, migcheck's cache, and
    ``extra`` (pytest's temporary directories: checkpoints and configs live there)."""
    paths = [repo / "migcheck", migcheck_cache(), *extra]
    if sys.prefix != sys.base_prefix:
        paths.insert(0, Path(sys.prefix))
    return paths


# ---------------------------------------------------------------- the cluster


@dataclass
class Daemon:
    """One of the cluster's JVMs: its process (a session leader), log and ports."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    port: int
    webui_port: int
    work_dir: Path | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid


@dataclass
class SparkCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each on 127.0.0.1.

    ``root`` holds everything the cluster writes (logs, work and local directories);
    ``hidden`` are bind-mounted over with an empty directory in each worker's namespace.
    """

    root: Path
    venv: Path
    hidden: Sequence[Path] = ()
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    #: the executors' JVMs run as the suite's other short JVMs do (QUICK_JVM): the tests'
    #: jobs read a few thousand records; the benchmark's cluster keeps the JVM's defaults
    quick_executors: bool = False
    master: Daemon | None = None
    nodes: dict[int, Daemon] = field(default_factory=dict)
    _runs: int = 0

    # ---- addresses and the driver's side

    @property
    def url(self) -> str:
        assert self.master is not None, "the cluster is not started"
        return f"spark://127.0.0.1:{self.master.port}"

    @property
    def python(self) -> Path:
        """The workers' interpreter."""
        return self.venv / "bin" / "python"

    def driver_args(self) -> list[str]:
        """migcheck's own flags for this cluster: the master, a driver reachable on loopback,
        and executors that fit the workers (one executor of 1 core per worker)."""
        return [
            "--master", self.url,
            "--conf", "spark.driver.host=127.0.0.1",
            "--conf", f"spark.executor.memory={self.memory}",
            "--conf", f"spark.executor.cores={self.cores}",
            "--conf", f"spark.cores.max={self.cores * self.workers}",
            *(("--conf", f"spark.executor.extraJavaOptions={' '.join(QUICK_JVM)}")
              if self.quick_executors else ()),
        ]  # fmt: skip

    def driver_env(self, log: Path | None = None) -> dict[str, str]:
        """The test process's environment without anything that would name a Python for the
        executors (the in-process Spark fixture sets PYSPARK_PYTHON to the driver's)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
        if log is not None:
            env["MIGCHECK_SPARK_LOG"] = str(log)
        return env

    def migcheck(self, command: str, *args: str, timeout: float = 600, cluster: bool = True) -> Run:
        """``python -m migcheck COMMAND ARGS`` as a user runs it, on this cluster (or, with
        ``cluster=False``, on the embedded default), its Spark log kept for the failure."""
        self._runs += 1
        log = self.root / "driver" / f"{self._runs:03d}-{command}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "migcheck", command, *args]
        argv += self.driver_args() if cluster else []
        start = time.monotonic()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                           env=self.driver_env(log))  # fmt: skip
        self.drop_finished_deps()
        return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start, log)

    def drop_finished_deps(self) -> None:
        """Remove what the executors of finished applications unpacked from migcheck's
        archive (some 260 MB per executor per run), keeping everything else they wrote.

        A standalone worker keeps each application's directory until its own cleanup
        (``spark.worker.cleanup.enabled``, off by default, and it would take the
        executors' logs the tests read): nine cluster runs left 4.4 GB, which with
        the rest filled CI's disk (docs/development.md, run R)."""
        if self.master is None:
            return
        running = {a.get("id") for a in self.state().get("activeapps", [])}
        for app in self.root.glob("work-*/app-*"):
            if app.name in running:
                continue
            for fetched in app.glob("*/migcheck-deps*"):
                _remove(fetched)

    # ---- lifecycle

    def start(self) -> SparkCluster:
        """Start the master, then the workers; return once the master lists them ALIVE."""
        if os.geteuid() != 0 and self.hidden:
            raise ClusterError("hiding the driver's files needs root (mount namespaces)")
        for d in ("conf", "logs"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        self._check_hidden()
        atexit.register(self.stop)
        port, webui = free_ports(2)
        self.master = self._spawn("master", self._master_argv(port, webui), port, webui)
        self._until(lambda s: s.get("status") == "ALIVE", "the master to answer")
        for i in range(self.workers):
            self.start_worker(i)
        self.check_hidden_from_workers()
        return self

    def start_worker(self, i: int) -> Daemon:
        """Start worker ``i`` (again) and wait until the master lists it ALIVE."""
        port, webui = free_ports(2)
        work = self.root / f"work-{i}"
        work.mkdir(exist_ok=True)
        (self.root / f"local-{i}").mkdir(exist_ok=True)
        argv = self._worker_argv(i, port, webui, work)
        node = self._spawn(f"worker-{i}", argv, port, webui, work, self._worker_env(i))
        self.nodes[i] = node
        self._until(lambda s: self._listed(s, node), f"worker {i} to register")
        return node

    def stop_worker(self, i: int) -> None:
        """Kill worker ``i`` and its executors (a host lost), and wait until the master
        no longer lists it ALIVE."""
        node = self.nodes.pop(i)
        _kill_session(node)
        self._until(lambda s: not self._listed(s, node), f"the master to drop worker {i}")

    def stop(self) -> None:
        """Kill every daemon with its children; raise if any process of theirs survives.
        The executors' logs stay; what they fetched and unpacked (a few hundred MB per
        application) goes."""
        left: list[str] = []
        for node in [*self.nodes.values(), *([self.master] if self.master else [])]:
            left += _kill_session(node)
        self.nodes.clear()
        self.master = None
        if left:
            raise ClusterError(f"processes survived the cluster's stop: {left}")
        self._drop_fetched()

    def _drop_fetched(self) -> None:
        for executor in self.root.glob("work-*/app-*/*"):
            for entry in executor.iterdir():
                if entry.name not in ("stdout", "stderr"):
                    _remove(entry)
        for local in self.root.glob("local-*"):
            shutil.rmtree(local, ignore_errors=True)

    # ---- state

    def state(self) -> dict:
        """The master's own JSON: its status, workers (id, host, port, state), applications."""
        assert self.master is not None
        url = f"http://127.0.0.1:{self.master.webui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as r:
            return dict(json.load(r))

    def alive_workers(self) -> list[dict]:
        return [w for w in self.state().get("workers", []) if w.get("state") == "ALIVE"]

    def app_dirs(self, i: int) -> set[str]:
        """The applications worker ``i`` ran executors for (its work directory's entries)."""
        return {p.name for p in (self.root / f"work-{i}").glob("app-*")}

    def apps(self) -> set[Path]:
        """Every application's directory on either worker."""
        return set(self.root.glob("work-*/app-*"))

    @staticmethod
    def tasks_run(apps: set[Path]) -> set[tuple[int, int]]:
        """Each (stage, task index) these applications' executors started, retries once,
        read from the executors' own logs ("Running task 2.1 in stage 3.0"): what ran."""
        tasks = set()
        for log in (f for app in apps for f in app.glob("*/stderr")):
            found = RUNNING_TASK.findall(log.read_text(errors="replace"))
            tasks |= {(int(stage), int(task)) for task, stage in found}
        return tasks

    def log_tails(self, lines: int = 30) -> str:
        """The last lines of each daemon's log: what a failing fixture shows."""
        out = []
        for log in sorted((self.root / "logs").glob("*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log} (last {lines} lines)\n" + "\n".join(text))
        return "\n".join(out)

    def files_containing(self, needle: str) -> list[str]:
        """Every file the cluster wrote (logs, work and local directories, the drivers'
        Spark logs) that contains ``needle``, by grep over the bytes.  A file or directory
        removed while grep walks the tree (an application of another test ending, its
        executor deleting its local directory) is no longer there to hold anything."""
        p = subprocess.run(["grep", "-rlaF", "--", needle, str(self.root)],
                           capture_output=True, text=True, check=False)  # fmt: skip
        vanished = all(
            line.endswith(": No such file or directory") for line in p.stderr.splitlines()
        )
        if p.returncode > 1 and not (p.stderr and vanished):
            raise ClusterError(f"grep failed: {p.stderr}")
        return p.stdout.split()

    # ---- internals

    def _spark_home(self) -> Path:
        return site_packages_pyspark(self.venv)

    def _master_argv(self, port: int, webui: int) -> list[str]:
        return [str(self._spark_home() / "bin" / "spark-class"),
                "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", str(port), "--webui-port", str(webui)]  # fmt: skip

    def _worker_argv(self, i: int, port: int, webui: int, work: Path) -> list[str]:
        """spark-class's Worker, inside a mount namespace where the hidden paths are empty."""
        spark = [
            str(self._spark_home() / "bin" / "spark-class"),
            "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
            "--port", str(port), "--webui-port", str(webui), "--cores", str(self.cores),
            "--memory", self.memory, "--work-dir", str(work), self.url,
        ]  # fmt: skip
        if not self.hidden:
            return spark
        mounts = []
        for k, h in enumerate(self.hidden):
            # an empty directory of this worker's own per path: what it writes there stays
            # on "its host", unseen by the driver, as on a separate machine
            empty = self.root / f"hidden-{i}" / str(k)
            empty.mkdir(parents=True, exist_ok=True)
            mounts.append(f"mount --bind {shlex.quote(str(empty))} {shlex.quote(str(h))}")
        script = " && ".join([*mounts, f"exec {shlex.join(spark)}"])
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script]

    def _daemon_env(self) -> dict[str, str]:
        """A clean environment, as on a host of its own: nothing of the driver's but PATH
        (after the workers' venv, and without the driver's venv, which tox puts first),
        HOME and JAVA_HOME."""
        driver = Path(sys.prefix).resolve()
        path = [
            d
            for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if d and not Path(d).resolve().is_relative_to(driver)
        ]
        env = {
            "PATH": os.pathsep.join([str(self.venv / "bin"), *path]),
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "SPARK_HOME": str(self._spark_home()),
            "SPARK_CONF_DIR": str(self.root / "conf"),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m",
            # the master's and workers' own JVMs (not the executors'), as the suite's other
            # daemons and fixtures run: they schedule, they compute nothing
            "SPARK_DAEMON_JAVA_OPTS": " ".join(QUICK_JVM),
        }
        if os.environ.get("JAVA_HOME"):
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        return env

    def _worker_env(self, i: int) -> dict[str, str]:
        return {
            **self._daemon_env(),
            "PYSPARK_PYTHON": str(self.python),
            "SPARK_LOCAL_DIRS": str(self.root / f"local-{i}"),
        }

    def _spawn(
        self,
        name: str,
        argv: list[str],
        port: int,
        webui: int,
        work: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Daemon:
        log = self.root / "logs" / f"{name}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env or self._daemon_env()),
                cwd=self.root,
                start_new_session=True,  # its own session: every descendant found and killed
            )
        return Daemon(name, proc, log, port, webui, work)

    def _listed(self, state: dict, node: Daemon) -> bool:
        return any(
            w.get("state") == "ALIVE" and int(w.get("port", -1)) == node.port
            for w in state.get("workers", [])
        )

    def _until(self, ready, what: str, timeout: float = READY_TIMEOUT_S) -> None:  # type: ignore[no-untyped-def]
        """Poll the master's JSON until ``ready(state)``; fail at once if a daemon died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [d.name for d in self._daemons() if d.proc.poll() is not None]
            if dead:
                raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}")
            with contextlib.suppress(OSError, ValueError):
                if ready(self.state()):
                    return
            time.sleep(0.25)
        raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")

    def _daemons(self) -> list[Daemon]:
        return [*([self.master] if self.master else []), *self.nodes.values()]

    def _check_hidden(self) -> None:
        """Every hidden path must exist (a mount point) and must not hold the cluster's own
        files, or the workers would lose their venv or their work directories."""
        for h in self.hidden:
            h.mkdir(parents=True, exist_ok=True)
            for own in (self.venv, self.root):
                if _inside(own, h):
                    raise ClusterError(f"cannot hide {h}: it holds {own}")

    def check_hidden_from_workers(self) -> None:
        """Each hidden path, seen from inside each worker's mount namespace, is empty."""
        for i, node in self.nodes.items():
            for h in self.hidden:
                inside = Path(f"/proc/{node.pid}/root") / h.relative_to("/")
                if any(inside.iterdir()):
                    raise ClusterError(f"worker {i} still sees {h} (unshare/mount failed?)")


@dataclass(frozen=True)
class Run:
    """One migcheck process: its exit code, outputs, wall time and Spark log."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    spark_log: Path

    def why(self) -> str:
        """What an assertion shows: the exit, stderr and the tail of Spark's log."""
        log = self.spark_log
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        head = f"exit {self.code} after {self.seconds:.0f} s"
        return f"{head}\n{self.stderr[-3000:]}\n--- {log}\n{tail}"


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 now (held open together while chosen)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _session_members(sid: int) -> list[int]:
    """Every live process of session ``sid`` (pyspark's daemon changes its process group,
    never its session), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found


def _kill_session(node: Daemon, timeout: float = 20) -> list[str]:
    """SIGKILL the daemon's whole session until none of it is left; the survivors' names."""
    sid = node.pid
    deadline = time.monotonic() + timeout
    while True:
        members = _session_members(sid)
        for pid in members:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.proc.wait(0.2)  # reap the leader; the others are reparented and reaped
        if not members or time.monotonic() > deadline:
            return [f"{node.name}: pid {p}" for p in members]


def prune_runs(runs: Path, keep: int = 2) -> None:
    """Remove all but the newest ``keep`` earlier run directories (their logs and work dirs),
    never one whose test session (the pid ending its name) still runs."""
    old = sorted((p for p in runs.glob("run-*") if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for p in old[: max(0, len(old) - keep)]:
        if not Path("/proc", p.name.rsplit("-", 1)[-1]).exists():
            shutil.rmtree(p, ignore_errors=True)


def new_run_dir(state: Path) -> Path:
    """A fresh directory for one cluster's files, under the state directory."""
    runs = state / "spark-cluster" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    prune_runs(runs)
    path = runs / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    path.mkdir()
    return path
