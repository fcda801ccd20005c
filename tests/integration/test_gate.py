"""`migcheck gate` on the harness's broker, every verdict borne out by the real readers.

One topic is read by the Streams fixture's count app (a changelog), the same app with
logging disabled, a stateless Streams app, a plain kafka-python group and a Quix Streams
count app; a second by a plain group only; a third, holding records, by nothing.  The
gate judges 3 -> 6 on the first from every input form (a Terraform plan, Strimzi and
Conduktor manifests, a kafka-gitops plan, --change), a Terraform and a Strimzi decrease of
the third.  Then the first topic is really altered, each reader runs again, and what it
does is what the gate said: the crash it quoted, the keys whose state split, a clean run,
the records a latest-reset consumer skipped.  Expected values come from the apps, the
records produced and kafka-python's murmur2, never from migcheck.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka import KafkaConsumer
from kafkatest import REPO, Kafka, read_and_commit, subscribe_once_known
from oracles import java_partition, run_cli
from quixapp import QuixApp
from streamsapp import KEYS, StreamsApp, moved_keys, phase1, phase2

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

FIXTURES = REPO / "fixtures" / "gate"


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """A fixture with its topic names replaced by the test's real ones."""
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    return names.get(value, value) if isinstance(value, str) else value


def _terraform(path: Path, fixture: str, names: dict[str, str], counts: tuple[int, int]) -> Path:
    """A plan from fixtures/gate/terraform, its one topic renamed and its counts set."""
    plan = _renamed(json.loads((FIXTURES / "terraform" / fixture).read_text()), names)
    (rc,) = plan["resource_changes"]
    rc["change"]["before"]["partitions"], rc["change"]["after"]["partitions"] = counts
    path.write_text(json.dumps(plan))
    return path


def _manifest(path: Path, fixture: str, topic: str, partitions: int) -> Path:
    (doc,) = [d for d in yaml.safe_load_all((FIXTURES / "manifests" / fixture).read_text()) if d]
    doc["metadata"]["name"] = topic
    doc["spec"].pop("topicName", None)
    doc["spec"]["partitions"] = partitions
    path.write_text(yaml.safe_dump(doc))
    return path


def _gitops(path: Path, topic: str) -> Path:
    plan = json.loads((FIXTURES / "kafka-gitops" / "plan.json").read_text())
    first = plan["topicPlans"][0]  # orders: 3 -> 6, UPDATE
    first["name"] = topic
    plan["topicPlans"] = [first]
    path.write_text(json.dumps(plan))
    return path


def _gate(kafka: Kafka, *args: str) -> tuple[int, dict, str]:
    p = run_cli("gate", "--bootstrap-server", kafka.bootstrap, "--format", "json", *args)
    assert p.returncode in (0, 1, 3), p.stderr
    return p.returncode, json.loads(p.stdout), p.stderr


def _consume(kafka: Kafka, topic: str, group: str, reset: str, idle: float = 8) -> list[str]:
    """A kafka-python consumer of ``group`` with ``reset``: the keys it reads until idle;
    it commits them and closes, as a plain consumer does."""

    def make() -> KafkaConsumer:
        consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=group,
                                 auto_offset_reset=reset)  # fmt: skip
        subscribe_once_known(consumer, topic)
        return consumer

    def read(consumer: KafkaConsumer) -> list[Any]:
        records: list[Any] = []
        last = time.monotonic()
        while time.monotonic() - last < idle:
            for batch in consumer.poll(timeout_ms=500).values():
                records += batch
                last = time.monotonic()
        return records

    consumer, records = read_and_commit(make, read)
    consumer.close()
    return [r.key.decode() for r in records]


@pytest.fixture(scope="module")
def readers(kafka: Kafka) -> Iterator[dict[str, Any]]:
    """The three topics and the first one's readers, each having read phase 1."""
    topic = kafka.create_topic("gate-orders", 3)
    apps = {
        t: StreamsApp(kafka, t, shared_input=topic) for t in ("count", "count-nolog", "passthrough")
    }
    quix = QuixApp(kafka, input=topic)
    kafka.produce(topic, [(k.encode(), v.encode(), None) for k, v in phase1()])
    for app in apps.values():
        assert app.run().code == 0
    assert quix.run().code == 0
    billing = kafka.unique("gate-billing")
    assert len(_consume(kafka, topic, billing, "earliest")) == len(phase1())
    second = kafka.create_topic("gate-payments", 3)
    kafka.produce(second, [(k.encode(), b"v", None) for k in KEYS[:50]])
    audit = kafka.unique("gate-audit")
    assert len(_consume(kafka, second, audit, "earliest")) == 50
    third = kafka.create_topic("gate-archive", 3)
    kafka.produce(third, [(k.encode(), b"v", None) for k in KEYS])
    yield {"topic": topic, "apps": apps, "quix": quix, "billing": billing,
           "second": second, "audit": audit, "third": third}  # fmt: skip


def test_every_input_form_gets_the_verdicts_the_real_readers_bear_out(
    kafka: Kafka, readers: dict[str, Any], tmp_path: Path
) -> None:
    topic, third, apps = readers["topic"], readers["third"], readers["apps"]
    # neither app shows its state on the cluster (no internal topic): their describe()
    stateless = apps["passthrough"].describe(tmp_path / "passthrough.txt")
    unlogged = apps["count-nolog"].describe(tmp_path / "nolog.txt")
    rc, report, err = _gate(
        kafka,
        "--terraform-plan", str(_terraform(tmp_path / "up.json", "update.json",
                                           {"orders": topic}, (3, 6))),
        "--terraform-plan", str(_terraform(tmp_path / "down.json", "replace.json",
                                           {"payments": third}, (3, 2))),
        "--manifests", str(_manifest(tmp_path / "s.yaml", "strimzi-v1beta2.yaml", topic, 6)),
        "--manifests", str(_manifest(tmp_path / "d.yaml", "strimzi-v1.yaml", third, 2)),
        "--manifests", str(_manifest(tmp_path / "c.yaml", "conduktor.yaml", topic, 6)),
        "--kafka-gitops-plan", str(_gitops(tmp_path / "g.json", topic)),
        "--change", f"{topic}=6", "--change", f"{third}=6",
        "--group", readers["billing"],
        "--topology", f"{apps['passthrough'].app_id}={stateless}",
        "--topology", f"{apps['count-nolog'].app_id}={unlogged}",
        "--full",
    )  # fmt: skip
    assert rc == 1 and report["verdict"] == "DATA_LOSS", err
    by_source = {(c["topic"], c["source"]["kind"], c["to"]): c for c in report["changes"]}
    # the third topic: Terraform's replace loses it, Strimzi refuses the decrease, and
    # 3 -> 6 with no reader only moves keys
    assert by_source[(third, "terraform", 2)]["verdict"] == "DATA_LOSS"
    assert [r["code"] for r in by_source[(third, "terraform", 2)]["rules"]] == ["MC101"]
    refused = by_source[(third, "strimzi", 2)]
    assert (refused["verdict"], refused["rules"][0]["code"]) == ("REFUSED", "MC401")
    moves = by_source[(third, "change", 6)]
    assert (moves["verdict"], moves["blocking"], moves["readers"]) == ("MOVES", False, [])
    assert moves["moved"]["keys"] == len(moved_keys(3, 6))  # kafka-python's murmur2
    # Conduktor's Topic resource keeps its count (its docs: spec.partitions is immutable):
    # refused, its readers listed unjudged
    (conduktor,) = [c for c in report["changes"] if c["source"]["kind"] == "conduktor"]
    assert (conduktor["verdict"], conduktor["rules"][0]["code"]) == ("REFUSED", "MC402")
    assert len(conduktor["readers"]) == 5 and conduktor["blocking"]
    # the first topic, from every other form: the same readers, the same verdicts
    forms = [c for c in report["changes"] if c["topic"] == topic and c is not conduktor]
    assert sorted(c["source"]["kind"] for c in forms) == [
        "change", "kafka-gitops", "strimzi", "terraform"
    ]  # fmt: skip
    verdicts = [{r["id"]: r["verdict"] for r in c["readers"]} for c in forms]
    assert all(v == verdicts[0] for v in verdicts)
    judged = {r["id"]: r for r in forms[0]["readers"]}
    assert {i: r["verdict"] for i, r in judged.items()} == {
        apps["count"].app_id: "CRASH",
        apps["count-nolog"].app_id: "CORRUPT",
        apps["passthrough"].app_id: "SAFE",
        readers["quix"].group: "CRASH",
        readers["billing"]: "LOSS_RISK",
    }
    assert all(c["verdict"] == "CRASH" and c["blocking"] for c in forms)
    assert f"--application-id {apps['count'].app_id}" in " ".join(forms[0]["next"])
    # without their describe(), state that no topic shows cannot be ruled out: UNKNOWN,
    # naming what settles it
    _, bare, _ = _gate(kafka, "--change", f"{topic}=6", "--group", readers["billing"])
    unseen = {r["id"]: r for r in bare["changes"][0]["readers"]}
    for app in (apps["passthrough"], apps["count-nolog"]):
        assert unseen[app.app_id]["verdict"] == "UNKNOWN"
        assert "--topology APP_ID=FILE" in unseen[app.app_id]["reasons"][0]

    _alter_and_observe(kafka, readers, judged)


def _alter_and_observe(kafka: Kafka, readers: dict[str, Any], judged: dict[str, Any]) -> None:
    """What each reader really does after the alter, against what the gate said."""
    topic, apps, quix = readers["topic"], readers["apps"], readers["quix"]
    apps["count"].alter(topic, 6)
    kafka.produce(topic, [(k.encode(), v.encode(), None) for k, v in phase2()])
    crashed = apps["count"].run()
    assert crashed.crash is not None
    assert judged[apps["count"].app_id]["reasons"][0] in crashed.crash
    split = apps["count-nolog"].run()
    assert split.crash is None
    assert {k for k, n in split.values("counts").items() if n > 1} == moved_keys(3, 6)
    clean = apps["passthrough"].run()
    assert (clean.crash, clean.code) == (None, 0)
    refused = quix.run()
    assert refused.code != 0 and judged[quix.group]["reasons"][0] in refused.stderr
    # a plain consumer at kafka-python's default reset (latest) skips what the new
    # partitions got before it held an offset there
    read = _consume(kafka, topic, readers["billing"], "latest")
    new_partitions = {k for k, _ in phase2() if java_partition(k.encode(), 6) >= 3}
    assert new_partitions and not new_partitions & set(read)
    assert len(read) == len(phase2()) - len(new_partitions)


def test_an_acceptance_passes_the_gate_and_goes_stale_when_the_change_does(
    kafka: Kafka, readers: dict[str, Any], tmp_path: Path
) -> None:
    second, audit = readers["second"], readers["audit"]
    accept = tmp_path / "accept.yaml"
    accept.write_text(yaml.safe_dump({"accept": [
        {"topic": second, "to": 6, "verdict": "LOSS_RISK",
         "reason": "the audit consumer runs with auto.offset.reset=earliest"},
    ]}))  # fmt: skip
    args = ("--group", audit, "--accept", str(accept))
    rc, report, _ = _gate(kafka, "--change", f"{second}=6", *args)
    (change,) = report["changes"]
    assert (rc, change["verdict"], change["accepted"], report["passed"]) == (
        0, "LOSS_RISK", True, True
    )  # fmt: skip
    rc, report, err = _gate(kafka, "--change", f"{second}=12", *args)
    (change,) = report["changes"]
    assert (rc, change["accepted"], change["acceptance"]["stale"]) == (1, False, ["to"]), err
    markdown = run_cli("gate", "--bootstrap-server", kafka.bootstrap, "--change",
                       f"{second}=12", *args, "--format", "markdown").stdout  # fmt: skip
    assert markdown.startswith("<!-- migcheck-gate -->\n")
    assert "Stale acceptance" in markdown and "<svg" not in markdown
