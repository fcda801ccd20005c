"""Secured clusters: `analyze`, `app` and `copy` over SASL SCRAM-SHA-512 and over TLS with
PEM files, the secret never in any output; and the faults a secured or absent cluster
causes, each one clear line and a non-zero exit within the issue's bounds.

The broker is scripts/kafka-local started with --sasl: a SCRAM-SHA-512 user created at
format time, and a TLS listener whose certificates openssl generated at start.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import java_partition, run_cli
from streamsapp import StreamsApp, phase1, ran_once

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

SCRAM_SECRET = "scram-alice-secret"


def _scram(path: Path, password: str = SCRAM_SECRET) -> Path:
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="scram-alice" password="{password}";\n'
    )
    return path


def _tls(path: Path, ca: str) -> Path:
    path.write_text(
        f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={ca}\n"
    )
    return path


@pytest.fixture(scope="module")
def count_app(kafka: Kafka) -> StreamsApp:
    """A real count app that has run once (over plaintext), to be inspected securely."""
    if kafka.sasl_bootstrap is None or kafka.ssl_bootstrap is None or kafka.ca is None:
        pytest.fail("the broker under test has no SASL/TLS listeners (kafka-local start --sasl)")
    return ran_once(kafka)


@pytest.mark.parametrize("listener", ["scram", "tls"])
def test_analyze_app_and_copy_over_a_secured_listener(
    listener: str,
    kafka: Kafka,
    count_app: StreamsApp,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spark_log = tmp_path / "spark.log"
    monkeypatch.setenv("MIGCHECK_SPARK_LOG", str(spark_log))
    if listener == "scram":
        bootstrap, config = kafka.sasl_bootstrap, _scram(tmp_path / "client.properties")
    else:
        bootstrap, config = kafka.ssl_bootstrap, _tls(tmp_path / "client.properties", kafka.ca)
    secured = ["--bootstrap-server", str(bootstrap), "--command-config", str(config)]
    records = len(phase1())
    outputs: list[str] = []

    for mode in (["--full"], ["--sample-per-partition", "50"]):
        r = run_cli("analyze", *secured, "--topic", count_app.input, "--to", "6", *mode,
                    "--format", "json")  # fmt: skip
        assert r.returncode == 0, r.stderr
        scanned = json.loads(r.stdout)["topics"][0]["records_scanned"]
        assert scanned == records if mode == ["--full"] else 0 < scanned <= records
        outputs += [r.stdout, r.stderr]

    report = tmp_path / "app.md"
    r = run_cli("app", *secured, "--application-id", count_app.app_id, "--topic",
                count_app.input, "--to", "6", "--state", "--full", "--format", "markdown",
                "--output", str(report))  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    assert count_app.app_id in report.read_text()
    outputs += [r.stdout, r.stderr, report.read_text()]

    into = kafka.create_topic("secured-copy", 6)
    checkpoint = tmp_path / "copy.json"
    r = run_cli("copy", *secured, "--topic", count_app.input, "--into", into,
                "--checkpoint", str(checkpoint))  # fmt: skip
    assert r.returncode == 0, r.stderr
    copied = kafka.dump(into)  # Kafka's Java consumer, committed records
    assert sorted(d.key for d in copied) == sorted(d.key for d in kafka.dump(count_app.input))
    assert all(d.partition == java_partition(d.key, 6) for d in copied if d.key is not None)
    outputs += [r.stdout, r.stderr, checkpoint.read_text()]  # the copy's whole recovery state

    outputs.append(spark_log.read_text())
    assert "default log level" in outputs[-1]  # Spark's JVM wrote its log there
    for text in outputs:
        assert SCRAM_SECRET not in text


def test_a_wrong_scram_password_fails_fast_and_says_so(kafka: Kafka, tmp_path: Path) -> None:
    if kafka.sasl_bootstrap is None:
        pytest.fail("the broker under test has no SASL listener")
    config = _scram(tmp_path / "bad.properties", password="Wr0ng-s3cret")
    for command in (["analyze", "--topic", "any", "--to", "6", "--full"],
                    ["app", "--application-id", "any", "--topic", "any", "--to", "6"]):  # fmt: skip
        start = time.monotonic()
        r = run_cli(command[0], "--bootstrap-server", kafka.sasl_bootstrap,
                    "--command-config", str(config), *command[1:])  # fmt: skip
        assert time.monotonic() - start < 10, "the issue's bound: 10 s"
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and "authentication failed" in r.stderr, r.stderr
        assert "invalid credentials" in r.stderr and "--command-config" in r.stderr
        assert "Wr0ng-s3cret" not in r.stdout + r.stderr


def test_an_unreachable_cluster_fails_within_15s() -> None:
    """10.255.255.1 swallows packets (no refusal), the slow way a wrong address fails."""
    commands = [
        ["analyze", "--topic", "t", "--to", "6", "--full"],
        ["plan", "--application-id", "a"],
        ["copy", "--topic", "t", "--into", "u"],
    ]
    for command in commands:
        start = time.monotonic()
        r = run_cli(command[0], "--bootstrap-server", "10.255.255.1:9092", *command[1:])
        assert time.monotonic() - start < 15, "the issue's bound: 15 s"
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and "cannot reach Kafka" in r.stderr, r.stderr


def test_an_application_id_without_a_group_is_one_line(kafka: Kafka) -> None:
    r = run_cli("app", "--bootstrap-server", kafka.bootstrap, "--application-id",
                "no-such-app", "--topic", "t", "--to", "6")  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no stream processor's application" in r.stderr
