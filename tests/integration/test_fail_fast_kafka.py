"""Bad input against the real broker (scripts/kafka-local start --sasl): a listener met
with the wrong protocol, a wrong password, an unknown client config, and a ``--to``
equal to the current count.  Each answers in one stderr line that says what to do,
with no exception class name, within issue 43's 5 s past start-up.

What the listeners answer a PLAINTEXT client was found against this broker (Kafka 4.3):
the TLS listener a TLS alert, the SASL one ApiVersions and then a closed connection at
the Metadata request (migcheck/kafka/listener.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from failfast import BOUND_S, one_line, timed_cli
from kafkatest import Kafka

pytestmark = [pytest.mark.kafka]


@pytest.fixture(scope="module")
def secured(kafka: Kafka) -> Kafka:
    if kafka.sasl_bootstrap is None or kafka.ssl_bootstrap is None:
        pytest.fail("the broker under test has no SASL/TLS listeners (kafka-local start --sasl)")
    return kafka


@pytest.fixture(scope="module")
def baseline(kafka: Kafka, tmp_path_factory: pytest.TempPathFactory) -> float:
    """``readers`` started and refused before any read (a bad --output)."""
    missing = tmp_path_factory.mktemp("out") / "no-such-dir" / "r.txt"
    r, elapsed = timed_cli("readers", "--bootstrap-server", kafka.bootstrap, "--topic", "t",
                           "--output", str(missing))  # fmt: skip
    assert r.returncode == 2, r.stderr
    return elapsed


@pytest.fixture(scope="module")
def topic_of_six(kafka: Kafka) -> str:
    topic = kafka.unique("i43-six")
    rc, _, err = kafka.tool("kafka-topics", "--bootstrap-server", kafka.bootstrap,
                            "--create", "--topic", topic, "--partitions", "6")  # fmt: skip
    assert rc == 0, err
    return topic


def test_a_sasl_listener_without_command_config_is_named_with_the_keys(
    secured: Kafka, baseline: float
) -> None:
    address = secured.sasl_bootstrap
    r, elapsed = timed_cli("readers", "--bootstrap-server", str(address), "--topic", "t")
    assert r.returncode == 2
    line = one_line(r)
    assert line.startswith(f"migcheck: error: {address} is a SASL listener"), line
    for key in ("--command-config", "security.protocol=SASL_PLAINTEXT", "sasl.mechanism",
                "sasl.jaas.config"):  # fmt: skip
        assert key in line, line
    assert elapsed - baseline < BOUND_S, (elapsed, baseline)


def test_a_tls_listener_without_command_config_is_named_with_the_keys(
    secured: Kafka, baseline: float
) -> None:
    address = secured.ssl_bootstrap
    r, elapsed = timed_cli("analyze", "--bootstrap-server", str(address), "--topic", "t",
                           "--to", "6")  # fmt: skip
    assert r.returncode == 2
    line = one_line(r)
    assert line.startswith(f"migcheck: error: {address} is a TLS listener"), line
    for key in ("--command-config", "security.protocol=SSL", "ssl.truststore.location"):
        assert key in line, line
    assert elapsed - baseline < BOUND_S, (elapsed, baseline)


def test_a_wrong_password_says_authentication_failed_once(
    secured: Kafka, baseline: float, tmp_path: Path
) -> None:
    config = tmp_path / "bad.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="scram-alice" password="Wr0ng";\n'
    )
    r, elapsed = timed_cli("readers", "--bootstrap-server", str(secured.sasl_bootstrap),
                           "--topic", "t", "--command-config", str(config))  # fmt: skip
    assert r.returncode == 2
    line = one_line(r)
    assert line == (
        f"migcheck: error: authentication failed at {secured.sasl_bootstrap}: invalid "
        "credentials with SASL mechanism SCRAM-SHA-512 (check the credentials in "
        "--command-config)"
    )
    assert line.lower().count("authentication failed") == 1
    assert "Wr0ng" not in r.stdout + r.stderr
    assert elapsed - baseline < BOUND_S, (elapsed, baseline)


def test_an_unknown_client_config_is_warned_about_and_the_read_goes_on(
    kafka: Kafka, topic_of_six: str, tmp_path: Path
) -> None:
    config = tmp_path / "client.properties"
    config.write_text("foo.bar=1\nmax.poll.records=100\n")
    r, _ = timed_cli("readers", "--bootstrap-server", kafka.bootstrap, "--topic", topic_of_six,
                     "--command-config", str(config), "--format", "json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr == (
        "migcheck: warning: --command-config: the configuration 'foo.bar' was supplied "
        "but isn't a known config (ignored)\n"
    )
    assert topic_of_six in r.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "--topic", "{t}", "--to", "6"],
        ["analyze", "--topic", "{t}", "--to", "6", "--format", "json"],
        ["readers", "--topic", "{t}", "--to", "6"],
    ],
)
def test_to_equal_to_the_current_count_says_nothing_changes(
    command: list[str], kafka: Kafka, topic_of_six: str
) -> None:
    args = [a.format(t=topic_of_six) for a in command]
    r, _ = timed_cli(args[0], "--bootstrap-server", kafka.bootstrap, *args[1:])
    assert r.returncode == 0, r.stderr
    assert one_line(r) == (
        f"migcheck: nothing changes: {topic_of_six} has 6 partitions already (--to 6)"
    )
    assert r.stdout == ""  # no report calling an unchanged topic SAFE
