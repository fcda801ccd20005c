"""The gate on a real tofu plan that widens a joined app's topics (issue 71): OpenTofu and
the Mongey Kafka provider (scripts/tofu-build) plan the change of topics that a real Kafka
Streams app reads, and ``migcheck gate --terraform-plan`` judges the plan's changes.

The app is fixtures/java/streams' ``join-rekey``: orders left-joined with
``builder.table(customers)``, re-keyed and counted through a repartition topic.  Its two
topics are imported into tofu's state, and two plans are shown as JSON before anything
changes: one that widens both to 6, one that widens orders alone.  Each plan is then
applied for real, and the app run on it: the line it crashes with is the expected value
of the gate's first reason, never migcheck's own words.
- Both sides: the changes are judged together, as the app meets them, so the gate quotes
  the repartition topic's error and never co-partitioning.
- One side: the gate quotes the co-partitioning error, and its next step names the other
  topic.

Opt-in (``tox -e tofu``, tests/tofu/conftest.py), with the tofu lane's build.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from kafkatest import Kafka
from oracles import run_cli
from streamsapp import (
    CLASSIC_TOPOLOGY,
    KEYS,
    STREAMS_EXCEPTION,
    StreamsApp,
    phase1,
    phase2,
    quoted_crash,
)
from tofurun import REQUIRED, run_tofu

pytestmark = pytest.mark.kafka


def _config(bootstrap: str, app: StreamsApp, orders: int, customers: int) -> str:
    """The app's two topics as tofu declares them, at these counts."""
    provider = (
        f'provider "kafka" {{\n  bootstrap_servers = ["{bootstrap}"]\n  tls_enabled = false\n}}\n'
    )
    topics = "".join(
        f'resource "kafka_topic" "{resource}" {{\n  name = "{name}"\n'
        f"  partitions = {count}\n  replication_factor = 1\n}}\n"
        for resource, name, count in (
            ("orders", app.input, orders),
            ("customers", app.table, customers),
        )
    )
    return REQUIRED + provider + topics


def _planned(tofu: str, env: dict[str, str], work: Path, name: str) -> Path:
    """``tofu plan`` of main.tf as it stands, shown as JSON."""
    run_tofu([tofu, "plan", "-input=false", "-no-color", f"-out={name}.tfplan"], work, env)
    plan = work / f"{name}.json"
    plan.write_text(run_tofu([tofu, "show", "-json", f"{name}.tfplan"], work, env))
    return plan


def _judged(app: StreamsApp, plan: Path, topology: Path) -> dict[str, dict]:
    """The gate's judgement of the app, by changed topic: it blocks."""
    p = run_cli(
        "gate", "--bootstrap-server", app.kafka.bootstrap, "--terraform-plan", str(plan),
        "--topology", f"{app.app_id}={topology}", "--format", "json",
    )  # fmt: skip
    assert p.returncode == 1, p.stderr
    judged = {}
    for change in json.loads(p.stdout)["changes"]:
        (reader,) = [r for r in change["readers"] if r["id"] == app.app_id]
        judged[change["topic"]] = {**reader, "next": change["next"]}
    return judged


def test_a_real_plan_widening_a_join_is_judged_as_the_app_meets_it(
    bootstrap: str, tofu_env: tuple[str, dict[str, str]], kafka: Kafka, tmp_path: Path
) -> None:
    tofu, env = tofu_env
    app = StreamsApp(kafka, "join-rekey", session_timeout_ms=10_000)
    app.produce(app.table, [(k, f"c{i}") for i, k in enumerate(KEYS)])
    app.produce(app.input, phase1())
    first = app.run()
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]
    topology = app.describe(tmp_path / "join-rekey.txt")

    work = tmp_path / "tofu"
    work.mkdir()
    main = work / "main.tf"
    main.write_text(_config(bootstrap, app, 3, 3))
    run_tofu([tofu, "init", "-input=false", "-no-color"], work, env)
    for resource, name in (("orders", app.input), ("customers", app.table)):
        run_tofu([tofu, "import", "-input=false", "-no-color", f"kafka_topic.{resource}", name],
                 work, env)  # fmt: skip
    try:
        main.write_text(_config(bootstrap, app, 6, 6))
        both = _judged(app, _planned(tofu, env, work, "both"), topology)
        main.write_text(_config(bootstrap, app, 6, 3))
        one = _judged(app, _planned(tofu, env, work, "one"), topology)

        # orders widened alone, for real: the app's own first error
        run_tofu([tofu, "apply", "-auto-approve", "-input=false", "-no-color"], work, env)
        app.produce(app.input, phase2())
        alone = quoted_crash(app.run().crash, CLASSIC_TOPOLOGY)
        # then customers too: co-partitioned again, the repartition topic's error
        main.write_text(_config(bootstrap, app, 6, 6))
        run_tofu([tofu, "apply", "-auto-approve", "-input=false", "-no-color"], work, env)
        together = quoted_crash(app.run().crash, STREAMS_EXCEPTION)
    finally:
        destroy = [tofu, "destroy", "-auto-approve", "-input=false", "-no-color"]
        subprocess.run(destroy, cwd=work, env=env, capture_output=True, timeout=600, check=False)

    assert alone.startswith("Topics not co-partitioned: [{")
    assert f"{app.app_id}-rekey-group-repartition" in together
    assert set(both) == {app.input, app.table}
    for reader in both.values():
        assert reader["verdict"] == "CRASH" and reader["reasons"][0] == together, reader
        assert not any("co-partitioned" in r for r in reader["reasons"]), reader
    (orders,) = one.values()
    assert orders["verdict"] == "CRASH" and orders["reasons"][0] == alone, orders
    assert any(app.table in step for step in orders["next"]), orders
