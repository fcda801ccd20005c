"""Checks on a real Spark Connect server (issue 73): ``migcheck server start`` runs one,
checks reach it with ``--remote``, and ``migcheck server stop`` ends it.

The server is pyspark's own Spark Connect server, started by the real command.  Expected
values come from kafka-python's murmur2 (``oracles.java_partition``), from kcat's reading
of the topics, and from the same command on the embedded ``local[2]``; never from
migcheck's own reading.  A check's processes are found by its session (it runs in one of
its own): a process it left behind would keep that session.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sparkcluster
from connectserver import Foreign, Server, embedded, foreign, migcheck, running
from copykill import kcat_count, read_state, session_pids
from kafkatest import Kafka, state_dir
from oracles import java_partition
from terminal import on_a_terminal
from tlsproxy import tls_in_front

from migcheck.copy.rounds import CHUNK  # sizes the data, never an expected value

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

#: Records enough that a full scan runs on Spark (a topic of 100,000 or fewer is read by
#: the check itself, with no Spark at all).
RECORDS, KEYS, PARTITIONS, TO = 120_000, 9_000, 3, 6
#: How long an embedded check's JVM may take to end after the check: it ends itself when
#: its gateway's pipe closes, then runs Spark's shutdown hooks (about 2 s here).
ENDS_WITHIN_S = 30.0
#: Three rounds of the copy's chunks per source partition (the last one short): a kill
#: lands mid-copy.
KILL_PARTITIONS, KILL_RECORDS = 3, 3 * (2 * CHUNK + CHUNK // 5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("connect-cache")) as started:
        yield started


@pytest.fixture(scope="module")
def topic(kafka: Kafka) -> tuple[str, list[str]]:
    """Keyed records by kcat with librdkafka's murmur2_random (Java's placement)."""
    rng = random.Random(73)
    keys = [f"user-{rng.randrange(KEYS)}" for _ in range(RECORDS)]
    name = kafka.create_topic("connect-scan", PARTITIONS)
    subprocess.run(
        ["kcat", "-P", "-b", kafka.bootstrap, "-t", name, "-K", "\t",
         "-X", "topic.partitioner=murmur2_random", "-X", "linger.ms=50"],
        input="".join(f"{k}\tv{i}\n" for i, k in enumerate(keys)), text=True, check=True,
        timeout=300,
    )  # fmt: skip
    return name, keys


def _in_own_session(
    env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    """A migcheck command in a session of its own, and the processes of that session still
    there :data:`ENDS_WITHIN_S` after it exited (none, unless it left one behind)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "migcheck", *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    out, err = proc.communicate(timeout=600)
    deadline = time.monotonic() + ENDS_WITHIN_S
    while (left := session_pids(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), left


def _without_java(env: dict[str, str]) -> dict[str, str]:
    """The environment with no way to start a JVM: no JAVA_HOME, no java on PATH."""
    path = [d for d in env.get("PATH", "").split(os.pathsep) if not Path(d, "java").exists()]
    return {**{k: v for k, v in env.items() if k != "JAVA_HOME"}, "PATH": os.pathsep.join(path)}


def _full_scan(kafka: Kafka, topic: tuple[str, list[str]]) -> tuple[str, ...]:
    return ("analyze", "--bootstrap-server", kafka.bootstrap, "--topic", topic[0],
            "--to", str(TO), "--full", "--format", "json")  # fmt: skip


def _report(stdout: str) -> dict:
    report = json.loads(stdout)
    report.pop("generated_at", None)
    return report


@pytest.fixture(scope="module")
def embedded_scan(kafka: Kafka, server: Server, topic: tuple[str, list[str]]) -> dict:
    """The full scan's report on the embedded ``local[2]``; its check left no process."""
    embedded, left = _in_own_session(server.env, *_full_scan(kafka, topic), "--master", "local[2]")
    assert embedded.returncode == 0, embedded.stderr[-2000:]
    assert left == []  # the embedded JVM and its workers ended with the check
    return _report(embedded.stdout)


def test_a_check_on_the_server_needs_no_java_gives_the_embedded_answer_and_leaves_nothing(
    kafka: Kafka, server: Server, topic: tuple[str, list[str]], embedded_scan: dict
) -> None:
    _, keys = topic
    args = _full_scan(kafka, topic)
    remote, left = _in_own_session(_without_java(server.env), *args, "--remote", server.url)
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert left == []
    assert _report(remote.stdout) == embedded_scan
    moved = {
        k for k in keys if java_partition(k.encode(), PARTITIONS) != java_partition(k.encode(), TO)
    }
    (entry,) = _report(remote.stdout)["topics"]
    (candidate,) = entry["candidates"]
    assert candidate["moved_keys"] == len(moved)
    assert entry["distinct_keys"] == len(set(keys))


def test_a_check_on_a_terminal_draws_its_read_to_the_end(
    kafka: Kafka, server: Server, topic: tuple[str, list[str]]
) -> None:
    """A session without accumulators still moves the bar: it reaches every record."""
    argv = [sys.executable, "-m", "migcheck", *_full_scan(kafka, topic), "--remote", server.url]
    argv[argv.index("json")] = "text"
    code, drawn = on_a_terminal(argv, env=server.env)
    assert code == 0, drawn
    assert f"{RECORDS}/{RECORDS}" in drawn, drawn[-3000:]


def test_a_warm_check_takes_the_session_the_last_one_left(
    kafka: Kafka, server: Server, topic: tuple[str, list[str]]
) -> None:
    """One check after another reuses the server's Python workers: the second starts none."""
    args = _full_scan(kafka, topic)
    assert server.check(*args).returncode == 0
    before = server.processes()
    again = server.check(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert server.processes() <= before  # no new worker: the session's were warm


def test_the_gate_on_the_server_judges_as_on_the_embedded_default(
    kafka: Kafka, server: Server, topic: tuple[str, list[str]]
) -> None:
    name, _ = topic
    args = ("gate", "--bootstrap-server", kafka.bootstrap, "--change", f"{name}={TO}", "--full",
            "--max-moved-fraction", "0.1", "--format", "json")  # fmt: skip
    remote = server.check(*args)
    embedded = migcheck(server.env, *args, "--master", "local[2]")
    assert remote.returncode == embedded.returncode == 1, remote.stderr + embedded.stderr
    assert _report(remote.stdout) == _report(embedded.stdout)


def test_a_killed_copy_on_the_server_is_fenced_and_its_rerun_copies_each_record_once(
    kafka: Kafka, server: Server, tmp_path: Path
) -> None:
    """The client killed mid-round leaves its tasks running on the server; the re-run's
    producers, under the same transactional ids, fence them."""
    source = kafka.create_topic("connect-copy-src", KILL_PARTITIONS)
    into = kafka.create_topic("connect-copy-dst", 6)
    lines = "".join(f"key-{i % 5000}\tvalue-{i}\n" for i in range(KILL_RECORDS))
    subprocess.run(["kcat", "-P", "-b", kafka.bootstrap, "-t", source, "-K", "\t", "-z", "none"],
                   input=lines, text=True, check=True, timeout=120)  # fmt: skip
    checkpoint = tmp_path / "copy.json"
    args = ["copy", "--bootstrap-server", kafka.bootstrap, "--topic", source, "--into", into,
            "--checkpoint", str(checkpoint), "--remote", server.url]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "migcheck", *args], env=server.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        state = read_state(checkpoint)
        if state.get("pending") and sum(int(n) for n in state.get("next", {}).values()):
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the copy ended before a second round began"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert kcat_count(kafka, into, "read_committed") < KILL_RECORDS  # killed in the middle
    rerun = subprocess.run([sys.executable, "-m", "migcheck", *args], env=server.env,
                           capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "missing 0, duplicated 0, misplaced 0: OK" in rerun.stdout
    assert kcat_count(kafka, into, "read_committed") == KILL_RECORDS


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Foreign]:
    """A server migcheck did not start: pyspark's own, from a virtualenv of PySpark's
    requirements alone (the cluster tests' workers' one)."""
    venv = sparkcluster.workers_venv(state_dir())
    spark_home = sparkcluster.site_packages_pyspark(venv)
    with foreign(venv, spark_home, tmp_path_factory.mktemp("team-server")) as started:
        yield started


def test_a_server_migcheck_did_not_start_gets_migcheck_as_its_sessions_artifacts(
    kafka: Kafka, team_server: Foreign, topic: tuple[str, list[str]], embedded_scan: dict
) -> None:
    """Its workers cannot import migcheck; a check ships it to the session and answers as
    the embedded one, and so does the next check, on the session the first one left."""
    bare = subprocess.run(  # as the server runs it: its own directory, no PYTHONPATH
        [team_server.python, "-c", "import migcheck"], cwd=team_server.log.parent, env={},
        capture_output=True,
    )  # fmt: skip
    assert bare.returncode != 0, "the team's workers must not have migcheck"
    args = _full_scan(kafka, topic)
    for _ in range(2):  # the user's cache: its archive is the cluster tests' too
        check = team_server.check(dict(os.environ), *args)
        assert check.returncode == 0, check.stderr[-2000:]
        assert _report(check.stdout) == embedded_scan
    sessions = set(re.findall(r'Got job \d+ \(Spark Connect - session_id: "([^"]+)"',
                              team_server.log.read_text()))  # fmt: skip
    assert len(sessions) == 1, sessions  # the server's own log: one session ran every job


def test_a_token_over_tls_reaches_a_server_behind_a_tls_endpoint(
    kafka: Kafka, server: Server, topic: tuple[str, list[str]], embedded_scan: dict,
    tmp_path: Path,
) -> None:  # fmt: skip
    """``use_ssl=true`` and ``token=`` from ``--remote-config``: the check verifies the
    endpoint's certificate (its CA named as gRPC reads one) and gives the server's token.
    A wrong token is refused in one line that never shows either; so is a certificate
    this machine does not trust, at once (pyspark alone retries it for minutes)."""
    if kafka.ca is None:
        pytest.fail("the broker under test has no TLS files (kafka-local start --sasl)")
    tls = Path(kafka.ca).parent  # kafka-local's CA, and a certificate for localhost
    assert server.config is not None
    token = server.config.read_text().strip()
    config, wrong = tmp_path / "tls.properties", tmp_path / "wrong.properties"
    config.write_text(f"{token}\nuse_ssl=true\n")
    wrong.write_text("token=not-the-token\nuse_ssl=true\n")
    env = {**embedded(server.env), "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(kafka.ca)}
    upstream = int(server.url.rsplit(":", 1)[1])
    with tls_in_front(upstream, tls / "server.crt", tls / "server.key") as port:
        url = f"sc://localhost:{port}"
        check = migcheck(env, *_full_scan(kafka, topic), "--remote", url, "--remote-config",
                         str(config))  # fmt: skip
        refused = migcheck(env, *_full_scan(kafka, topic), "--remote", url, "--remote-config",
                           str(wrong))  # fmt: skip
        untrusted = migcheck(
            {k: v for k, v in env.items() if k != "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"},
            *_full_scan(kafka, topic), "--remote", url, "--remote-config", str(config),
        )  # fmt: skip
    assert check.returncode == 0, check.stderr[-2000:]
    assert _report(check.stdout) == embedded_scan
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        f"migcheck: error: the Spark Connect server at {url} refused the token: give the one "
        f"it was started with as token= in --remote-config"
    ]
    assert "not-the-token" not in refused.stderr + refused.stdout
    assert untrusted.returncode != 0
    assert untrusted.stderr.strip().splitlines() == [
        f"migcheck: error: no TLS session with the Spark Connect server at {url} within 5 s: "
        f"this machine does not trust its certificate (name the CA's PEM file in "
        f"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), or it does not speak TLS (set use_ssl=false in "
        f"--remote-config)"
    ]
    assert token.removeprefix("token=") not in check.stderr + check.stdout + refused.stderr


def test_start_said_where_it_runs_and_stop_ends_every_process_it_began(server: Server) -> None:
    """Last: the module's server, which every test above used, stopped as an operator
    stops it (the fixture's own stop then finds none)."""
    status = migcheck(server.env, "server", "status")
    assert status.returncode == 0 and f"running at {server.url} (pid {server.pid}" in status.stdout
    began = server.processes()
    assert len(began) > 1  # the JVM and the Python workers of the checks' sessions
    stopped = migcheck(server.env, "server", "stop")
    assert stopped.returncode == 0 and f"stopped at {server.url}" in stopped.stdout
    assert [pid for pid in began if Path(f"/proc/{pid}").exists()] == []
    after = migcheck(server.env, "server", "status")
    assert after.returncode == 1 and "no Spark Connect server" in after.stdout
