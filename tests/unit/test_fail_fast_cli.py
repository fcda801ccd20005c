"""Bad input with no broker: each fails in one stderr line that says what to fix, before
any Kafka or Spark work, and the unreachable ones within issue 43's 5 s.

Each command runs as its own process, as a user runs it.  A time bound is measured from
a baseline (the same command refused for a bad ``--output``, which reads nothing), so a
loaded machine's slow start-up (Python, numpy, Click) does not count against the probe.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from pathlib import Path

import pytest
from failfast import BOUND_S, one_line, timed_cli


@pytest.fixture(scope="module")
def closed_port() -> str:
    """An address where nothing listens: a port the kernel gave, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def baseline(closed_port: str, tmp_path_factory: pytest.TempPathFactory) -> float:
    """How long ``analyze`` takes to start and refuse an input before any read."""
    missing = tmp_path_factory.mktemp("out") / "no-such-dir" / "r.txt"
    r, elapsed = timed_cli("analyze", "--bootstrap-server", closed_port, "--topic", "t",
                           "--to", "6", "--output", str(missing))  # fmt: skip
    assert r.returncode == 2, r.stderr
    return elapsed


def test_bare_migcheck_prints_the_help_as_click_lays_it_out() -> None:
    r, _ = timed_cli()
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: migcheck [OPTIONS] COMMAND [ARGS]...\n")
    commands = ["partition", "analyze", "readers", "app", "plan", "runbook", "copy", "gate"]
    assert all(re.search(rf"^  {c}\b", r.stdout, re.M) for c in commands), r.stdout
    assert r.stdout.count("\n") > 10  # laid out, not one line


def test_verbose_is_taken_after_the_subcommand_too(closed_port: str) -> None:
    for args in (["--verbose", "analyze"], ["analyze", "--verbose"]):
        r, _ = timed_cli(*args, "--bootstrap-server", closed_port, "--topic", "t", "--to", "6")
        assert r.returncode == 2
        assert one_line(r).startswith(f"migcheck: error: cannot reach Kafka at {closed_port}")


def test_a_refused_connection_fails_fast_naming_the_address(
    closed_port: str, baseline: float
) -> None:
    r, elapsed = timed_cli("analyze", "--bootstrap-server", closed_port, "--topic", "t",
                           "--to", "6")  # fmt: skip
    assert r.returncode == 2
    assert one_line(r) == (
        f"migcheck: error: cannot reach Kafka at {closed_port}: connection refused: "
        "no broker listens there (check --bootstrap-server)"
    )
    assert elapsed - baseline < BOUND_S, (elapsed, baseline)


def test_a_name_that_does_not_resolve_fails_fast(baseline: float) -> None:
    # .invalid never resolves (RFC 6761)
    r, elapsed = timed_cli("readers", "--bootstrap-server", "broker.invalid:9092", "--topic", "t")
    assert r.returncode == 2
    assert one_line(r) == (
        "migcheck: error: cannot reach Kafka at broker.invalid:9092: the host name "
        "broker.invalid does not resolve (check --bootstrap-server)"
    )
    assert elapsed - baseline < BOUND_S, (elapsed, baseline)


@pytest.mark.parametrize(
    ("output", "line"),
    [
        ("{tmp}/no-such-dir/r.txt", "--output {tmp}/no-such-dir/r.txt: its directory "
                                    "{tmp}/no-such-dir does not exist"),
        ("/proc/version", "--output /proc/version is not writable: /proc takes no new file"),
    ],
)  # fmt: skip
def test_an_output_that_cannot_be_written_fails_before_any_read(
    output: str, line: str, closed_port: str, tmp_path: Path
) -> None:
    """The broker address is refused too: the --output line, not the Kafka one, proves the
    path is checked first."""
    for command in (["analyze", "--topic", "t", "--to", "6"], ["readers", "--topic", "t"]):
        r, _ = timed_cli(command[0], "--bootstrap-server", closed_port, *command[1:],
                         "--output", output.format(tmp=tmp_path))  # fmt: skip
        assert r.returncode == 2
        assert one_line(r) == "migcheck: error: " + line.format(tmp=tmp_path)


@pytest.mark.parametrize("order", [["--full", "--sample-per-partition", "10"],
                                   ["--sample-per-partition", "10", "--full"]])  # fmt: skip
def test_full_with_a_sample_size_is_refused(order: list[str], closed_port: str) -> None:
    r, _ = timed_cli("analyze", "--bootstrap-server", closed_port, "--topic", "t", "--to", "6",
                     *order)  # fmt: skip
    assert r.returncode == 2
    assert one_line(r) == (
        "migcheck: error: --full reads every record, --sample-per-partition a sample: "
        "give one, not both"
    )


def test_full_alone_and_a_sample_alone_pass_the_check(closed_port: str) -> None:
    for extra in (["--full"], ["--sample-per-partition", "10"]):
        r, _ = timed_cli("analyze", "--bootstrap-server", closed_port, "--topic", "t",
                         "--to", "6", *extra)  # fmt: skip
        assert "cannot reach Kafka" in one_line(r)  # went past the options to the read


def test_an_unknown_client_config_is_warned_about_and_the_command_goes_on(
    closed_port: str, tmp_path: Path
) -> None:
    config = tmp_path / "client.properties"
    config.write_text("foo.bar=1\nsecurity.protocol=PLAINTEXT\nclient.id=me\n")
    r, _ = timed_cli("readers", "--bootstrap-server", closed_port, "--topic", "t",
                     "--command-config", str(config))  # fmt: skip
    assert r.returncode == 2
    warning, error = r.stderr.splitlines()
    assert warning == (
        "migcheck: warning: --command-config: the configuration 'foo.bar' was supplied "
        "but isn't a known config (ignored)"
    )
    assert error.startswith(f"migcheck: error: cannot reach Kafka at {closed_port}")


def test_a_bad_security_protocol_fails_before_any_read(closed_port: str, tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_TLS\n")
    r, _ = timed_cli("readers", "--bootstrap-server", closed_port, "--topic", "t",
                     "--command-config", str(config))  # fmt: skip
    assert r.returncode == 2
    assert one_line(r) == (
        "migcheck: error: --command-config: unsupported security.protocol 'SASL_TLS'"
    )


def test_a_report_missing_a_field_is_named_in_words() -> None:
    """``render``'s last resort for a report its checks let through: the field, not the
    Python exception's repr (it said ``KeyError('verdict')``)."""
    from migcheck.cli.render import _detail

    assert _detail(KeyError("verdict")) == "no field 'verdict'"
    assert _detail(TypeError("'int' object is not subscriptable")) == (
        "a field of the wrong shape: 'int' object is not subscriptable"
    )


def test_a_listener_that_is_not_kafka_is_named_as_such() -> None:
    """A port that accepts and closes at once (another service, a proxy with no backend)."""
    from migcheck.errors import ReadError
    from migcheck.kafka.listener import check_listeners

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"

        def close_each() -> None:
            conn, _ = server.accept()
            conn.close()

        threading.Thread(target=close_each, daemon=True).start()
        with pytest.raises(ReadError) as e:
            check_listeners(address, "PLAINTEXT")
    assert str(e.value) == (
        f"cannot reach Kafka at {address}: it accepted a connection but did not answer "
        "Kafka's first request (not a Kafka listener? check --bootstrap-server)"
    )


@pytest.mark.parametrize("args", [["--verbose", "partition"], ["partition", "--verbose"]])
def test_verbose_turns_verbose_on_before_or_after_the_subcommand(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from migcheck.cli.main import cli

    # setenv first: monkeypatch then knows it was unset, and unsets it after the test (a
    # bare delenv of an unset variable records nothing, and --verbose would leak into
    # every later test of this worker: Spark's output on their stderr)
    monkeypatch.setenv("MIGCHECK_VERBOSE", "")
    monkeypatch.delenv("MIGCHECK_VERBOSE")
    root = logging.getLogger()  # --verbose reconfigures it: give it back to the session
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    cli.main([*args, "--partitions", "6", "k1"], prog_name="migcheck", standalone_mode=False)
    assert "k1" in capsys.readouterr().out  # the command ran
    assert os.environ["MIGCHECK_VERBOSE"] == "1"


_TWO_APPS = ("runbook", "--application-id", "a", "--application-id", "b", "--topic", "t",
             "--to", "6")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ([*_TWO_APPS, "--topology", "c=c.txt"],
         "--topology c=FILE names no --application-id given"),
        ([*_TWO_APPS, "--strategy", "online", "--topology", "a=a.txt", "--output-topic", "o"],
         "--output-topic names one app's outputs: with several --application-id give each "
         "app's --topology APP_ID=FILE (its sinks are its outputs)"),
        ([*_TWO_APPS, "--strategy", "online", "--topology", "a=a.txt"],
         "--topology b=FILE is missing: with several --application-id migrate reads each "
         "app's outputs from its topology's sinks"),
        ([*_TWO_APPS, "--strategy", "online", "--topology", "a=a.txt", "--topology", "c=c.txt"],
         "--topology c=FILE names no --application-id given"),
        ([*_TWO_APPS, "--application-id", "a"],
         "--application-id 'a' is given twice: name each app once"),
    ],
)  # fmt: skip
def test_several_apps_are_named_once_and_online_each_by_its_topology(
    args: list[str], line: str
) -> None:
    """Issue 71: several apps of the topics move in one runbook, each named once; online,
    migrate reads each one's outputs from its --topology APP_ID=FILE (offline, a topology
    is each app's option, as one app's).  Refused before any broker is asked (none is
    named)."""
    p, _ = timed_cli(*args)
    assert p.returncode == 2
    assert p.stderr == f"migcheck: error: {line}\n", p.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["runbook", "--topic", "VIEWS", "--topic", "PROFILES", "--to", "6"],
         "the plain consumer groups' runbook widens one topic: pass one --topic, or "
         "--application-id for an app's runbook of several"),
        (["runbook", "--application-id", "shop", "--topic", "VIEWS", "--topic", "VIEWS",
          "--to", "6"], "--topic 'VIEWS' is given twice: name each topic once"),
        (["runbook", "--bootstrap-server", "nowhere:9", "--application-id", "shop", "--topic",
          "VIEWS", "--topic", "PROFILES", "--to", "6", "--into", "VIEWS-wide"],
         "--into names each --topic's copy, in order: give one for each of the 2 topics, or "
         "none (each <topic>-p<N>)"),
    ],
)  # fmt: skip
def test_a_runbook_takes_a_set_of_topics_for_an_app_only_each_once(
    args: list[str], line: str
) -> None:
    """Issue 71: an app's runbook widens a set (``--topic`` repeated); the plain groups'
    widens one, and a topic named twice is a typo, not a set.  Refused before any broker
    is asked (none is named)."""
    p, _ = timed_cli(*args)
    assert p.returncode == 2
    assert p.stderr == f"migcheck: error: {line}\n", p.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["migrate", "--topic", "orders", "--to", "6", "--checkpoint", "m.json",
          "--into", "a", "--into=b"],
         "--into is given 2 times, but migcheck migrate takes one"),
        (["copy", "--topic", "a", "--topic", "b", "--into", "c"],
         "--topic is given 2 times, but migcheck copy takes one"),
    ],
)  # fmt: skip
def test_an_option_of_one_value_given_twice_is_refused_not_silently_dropped(
    args: list[str], line: str
) -> None:
    """Click keeps the last value of a repeated single-valued option: runbook --topic VIEWS
    --topic PROFILES wrote PROFILES' runbook alone (issue 71).  Refused before any broker
    is asked (none is named)."""
    p, _ = timed_cli(*args)
    assert p.returncode == 2
    assert p.stderr == f"migcheck: error: {line}: it would act on the last alone\n", p.stderr


def test_a_set_migrates_into_its_topics_own_new_names_not_one_into() -> None:
    """Issue 71: migrate takes a set (--topic repeated); --into names one topic's new
    topic, so with a set it is refused before any broker is asked (none listens)."""
    p, _ = timed_cli(
        "migrate", "--bootstrap-server", "127.0.0.1:9", "--topic", "orders", "--topic",
        "customers", "--to", "6", "--checkpoint", "m.json", "--into", "orders-wide",
    )  # fmt: skip
    assert p.returncode == 2
    assert p.stderr == (
        "migcheck: error: --into names one topic's new topic: a set's are each TOPIC-pN\n"
    ), p.stderr


def test_several_apps_topologies_are_each_named_by_app_id_in_one_line() -> None:
    """Issue 71: migrate with two --application-id takes each --topology as APP_ID=FILE; a
    bare FILE cannot say whose it is, refused before any broker is asked (none listens)."""
    p, _ = timed_cli(
        "migrate", "--bootstrap-server", "127.0.0.1:9", "--topic", "orders", "--to", "6",
        "--checkpoint", "m.json", "--application-id", "a", "--application-id", "b",
        "--topology", "a.txt",
    )  # fmt: skip
    assert p.returncode == 2
    assert p.stderr == "migcheck: error: --topology 'a.txt': expected APP_ID=FILE\n", p.stderr
