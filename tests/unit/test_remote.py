"""``--remote`` and ``--remote-config``: a Spark Connect URL is taken as Spark Connect writes
it, a secret never from the command line, and the pool hands a check a session no other
check holds.  No server runs here: what reaches one is tests/integration/test_connect.py's.

The URLs' grammar is Spark Connect's own (``sc://host:port/;key=value``, its parameters
``token``, ``use_ssl``, ``user_id``, ``user_agent``, ``grpc_max_message_size``, and its
default port 15002), as pyspark's ``DefaultChannelBuilder`` documents them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from migcheck.analysis import remote_sessions, server_state
from migcheck.analysis.remote import (
    Endpoint,
    Remote,
    check_handshake,
    check_reachable,
    check_url,
    check_version,
    read_config,
    remote_address,
    shown,
    uses_tls,
)
from migcheck.commands.options import SparkSettings
from migcheck.errors import MigcheckError, UsageError

SECRET = "s3cr3t-t0ken-value"


def test_a_url_is_split_into_host_port_and_its_plain_parameters() -> None:
    assert check_url("sc://spark.example:443/;user_id=ops") == Endpoint(
        "spark.example", 443, (("user_id", "ops"),)
    )
    assert check_url("sc://localhost") == Endpoint("localhost", 15002)
    assert check_url("sc://[::1]:15003") == Endpoint("[::1]", 15003)


@pytest.mark.parametrize("key", ["token", "use_ssl"])
def test_a_secured_parameter_on_the_command_line_is_refused_without_echoing_it(key: str) -> None:
    with pytest.raises(UsageError) as refused:
        check_url(f"sc://h:15002/;{key}={SECRET}")
    assert f"--remote carries {key}=" in str(refused.value)
    assert "--remote-config FILE" in str(refused.value)
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://h:15002", "a Spark Connect URL starts with sc://"),
        ("sc://h:notaport", "give the server as sc://HOST:PORT"),
        ("sc://:15002", "give the server as sc://HOST:PORT"),
        ("sc://h:70000", "give the server as sc://HOST:PORT"),
        ("sc://h:15002/;session_id=x", "is not one of Spark Connect's URL parameters"),
    ],
)
def test_a_bad_url_is_one_line_naming_the_form(url: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        check_url(url)


def test_the_config_file_holds_the_secured_parameters_and_nothing_else(tmp_path: Path) -> None:
    good = tmp_path / "remote.properties"
    good.write_text(f"# the team's server\ntoken={SECRET}\nuse_ssl=true\n")
    assert read_config(str(good)) == {"token": SECRET, "use_ssl": "true"}
    bad = tmp_path / "bad.properties"
    bad.write_text(f"token={SECRET}\nspark.master=local\n")
    with pytest.raises(UsageError, match=r"spark\.master is not a Spark Connect setting") as e:
        read_config(str(bad))
    assert SECRET not in str(e.value)
    with pytest.raises(UsageError, match=r"no-such\.properties: No such file"):
        read_config(str(tmp_path / "no-such.properties"))


def test_the_address_pyspark_gets_carries_the_token_and_the_shown_one_never() -> None:
    endpoint = check_url("sc://h:15002/;user_id=ops")
    address = remote_address(endpoint, {"token": SECRET, "use_ssl": "true"}, "sid")
    assert address == f"sc://h:15002/;user_id=ops;token={SECRET};use_ssl=true;session_id=sid"
    assert shown(endpoint) == "sc://h:15002"


def test_a_server_that_does_not_answer_fails_in_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(
        MigcheckError, match=rf"no Spark Connect server answers at sc://127.0.0.1:{port}"
    ):
        check_reachable(Endpoint("127.0.0.1", port), timeout_s=2)


@pytest.mark.parametrize(
    ("host", "secured"),
    [("localhost", {"token": "t"}), ("spark.example", {"token": "t"}), ("localhost", {}),
     ("spark.example", {"use_ssl": "true"}), ("localhost", {"token": "t", "use_ssl": "true"}),
     ("spark.example", {"use_ssl": "false"})],
)  # fmt: skip
def test_tls_is_what_pysparks_channel_would_use(host: str, secured: dict[str, str]) -> None:
    from pyspark.sql.connect.client import DefaultChannelBuilder

    built = DefaultChannelBuilder(remote_address(Endpoint(host, 15002), secured, "s"))
    pysparks = built.secure and (built.use_ssl or built.host != "localhost")
    assert uses_tls(Endpoint(host, 15002), secured) == pysparks


def test_a_server_that_does_not_speak_tls_fails_its_handshake_in_one_line() -> None:
    with socket.socket() as plain:
        plain.bind(("127.0.0.1", 0))
        plain.listen()
        port = plain.getsockname()[1]
        with pytest.raises(MigcheckError, match=r"no TLS session with the Spark Connect server"):
            check_handshake(Endpoint("127.0.0.1", port), timeout_s=1)


@pytest.mark.parametrize(
    ("version", "refused"), [("4.0.1", True), ("3.5.3", True), ("4.1.0", False), ("4.2.0", False)]
)
def test_a_server_older_than_spark_4_1_is_refused(version: str, refused: bool) -> None:
    endpoint = Endpoint("h", 15002)
    if refused:
        with pytest.raises(MigcheckError, match=r"needs Spark 4\.1 or later"):
            check_version(version, endpoint)
    else:
        check_version(version, endpoint)


def test_remote_goes_with_no_master() -> None:
    where = Remote("sc://h:15002")
    with pytest.raises(UsageError, match="give --master or --remote, not both"):
        SparkSettings("local[2]", {}, where)
    with pytest.raises(UsageError, match="give --master or --remote, not both"):
        SparkSettings(None, {"spark.master": "local[2]"}, where)
    assert SparkSettings(None, {"spark.sql.shuffle.partitions": "4"}, where).remote == where


def test_the_cli_refuses_a_token_in_one_line_before_reading_anything() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "migcheck", "analyze", "--bootstrap-server", "127.0.0.1:1",
         "--topic", "t", "--to", "6", "--remote", f"sc://h:15002/;token={SECRET}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(
        "migcheck: error: --remote carries token="
    )
    assert SECRET not in r.stderr


def test_checks_at_once_take_different_sessions_and_one_after_another_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    first = remote_sessions.take("h", 15002)
    second = remote_sessions.take("h", 15002)  # while the first is held
    assert first.pooled and second.pooled and first.session_id != second.session_id
    first.conf_keys = ["spark.sql.shuffle.partitions"]
    remote_sessions.save(first)
    assert first.handle is not None
    first.handle.close()  # the check ends: its lock goes with its file
    again = remote_sessions.take("h", 15002)
    assert (again.session_id, again.conf_keys) == (first.session_id, first.conf_keys)
    assert (tmp_path / "connect" / "h-15002").stat().st_mode & 0o077 == 0


def test_a_process_that_ends_frees_its_session_however_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from migcheck.analysis import remote_sessions as r; "
         "s = r.take('h', 15002); print(s.session_id, flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "MIGCHECK_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert holder.stdout is not None
    held = holder.stdout.readline().strip()
    assert remote_sessions.take("h", 15002).session_id != held
    holder.kill()
    holder.wait(30)
    assert remote_sessions.take("h", 15002).session_id == held


def test_a_damaged_slot_gets_a_new_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    folder = remote_sessions.pool_dir("h", 15002)
    folder.mkdir(parents=True)
    (folder / "session-0.json").write_text('{"session_id": "not-a-uuid"}')
    slot = remote_sessions.take("h", 15002)
    assert slot.pooled and len(slot.session_id) == 36
    assert json.loads((folder / "session-0.json").read_text())["session_id"] == slot.session_id


def test_the_local_token_goes_to_the_local_server_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    # A process whose command line names the server class stands in for the server: the
    # state file is only trusted while such a process holds the pid.
    fake = subprocess.Popen(
        [sys.executable, "-c", "import sys; print(flush=True); sys.stdin.read()",
         server_state.SERVER_CLASS],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert fake.stdout is not None
    fake.stdout.readline()  # it runs: its command line is there to read
    path = server_state.state_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": fake.pid, "port": 15002, "token": SECRET, "url": "u"}))
    try:
        assert server_state.local_token("localhost", 15002) == SECRET
        assert server_state.local_token("127.0.0.1", 15002) == SECRET
        assert server_state.local_token("localhost", 15003) is None
        assert server_state.local_token("spark.example", 15002) is None
    finally:
        fake.kill()
        fake.wait(30)
    assert server_state.local_token("localhost", 15002) is None  # its process is gone
    assert not path.exists()  # and the stale state with it


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migcheck", *args], capture_output=True, text=True,
        timeout=60, check=False, env={**os.environ, **env},
    )  # fmt: skip


def test_the_environments_server_yields_to_a_master_given_on_the_command_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    args = ("analyze", "--bootstrap-server", closed, "--topic", "t", "--to", "6")
    bad = f"sc://h:15002/;token={SECRET}"
    r = _cli(*args, MIGCHECK_REMOTE=bad)  # taken: its token is refused
    assert r.returncode == 2 and "--remote carries token=" in r.stderr
    r = _cli(*args, "--master", "local[2]", MIGCHECK_REMOTE=bad)  # not taken: Kafka is next
    assert r.returncode == 2 and f"cannot reach Kafka at {closed}" in r.stderr
    assert SECRET not in r.stderr
    r = _cli("runbook", "--group", "g", *args[1:], MIGCHECK_REMOTE="sc://h:15002",
             MIGCHECK_REMOTE_CONFIG="/nonexistent")  # fmt: skip
    assert r.returncode == 2 and f"cannot reach Kafka at {closed}" in r.stderr  # no refusal
