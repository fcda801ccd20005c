"""The Terraform fixtures against a real plan: OpenTofu and the Mongey Kafka provider
(built by scripts/tofu-build) plan real changes of real topics on the harness's broker
(scripts/kafka-local), and ``tofu show -json`` of that plan must have the fixtures' shape,
entry for entry, and read into the proposals written out below.

Opt-in (``tox -e tofu``, tests/tofu/conftest.py): building OpenTofu takes minutes.
``MIGCHECK_TOFU_OUT`` names a directory to keep the real plan JSON in (FINDINGS.md).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafkatest import REPO
from tofurun import REQUIRED
from tofurun import run_tofu as _run

from migcheck.gate.inputs import read_proposals
from migcheck.model.gate import Proposal, Source, SourceKind

TF = REPO / "fixtures" / "gate" / "terraform"

#: The real plan's entries and the fixture entry each must match in shape:
#: real address -> (fixture file, index in its resource_changes).
ROLES = {
    "kafka_topic.orders": ("update.json", 0),
    "kafka_topic.payments": ("replace.json", 0),
    "kafka_topic.ledger": ("delete-create.json", 0),
    "module.core.kafka_topic.ledger": ("delete-create.json", 2),
    'module.streams.kafka_topic.events["clicks"]': ("module.json", 0),
    "kafka_topic.static": ("no-op.json", 0),
}


def _module(body: str) -> str:
    return REQUIRED + body


STREAMS = _module(
    'variable "topics" { type = map(object({ name = string, partitions = number })) }\n'
    'resource "kafka_topic" "events" {\n'
    "  for_each           = var.topics\n"
    "  name               = each.value.name\n"
    "  partitions         = each.value.partitions\n"
    "  replication_factor = 1\n"
    '  config             = { "cleanup.policy" = "delete" }\n'
    "}\n",
)
CORE = _module(
    'variable "name" { type = string }\n'
    'variable "partitions" { type = number }\n'
    'resource "kafka_topic" "ledger" {\n'
    "  name               = var.name\n"
    "  partitions         = var.partitions\n"
    "  replication_factor = 1\n"
    '  config             = { "cleanup.policy" = "delete" }\n'
    "}\n",
)


def _topic(resource: str, name: str, partitions: int) -> str:
    return (
        f'resource "kafka_topic" "{resource}" {{\n'
        f'  name               = "{name}"\n'
        f"  partitions         = {partitions}\n"
        "  replication_factor = 1\n"
        '  config             = { "cleanup.policy" = "delete" }\n'
        "}\n"
    )


def _root(bootstrap: str, prefix: str, *, second: bool) -> str:
    """The first configuration, or the second, which changes every case at once."""
    provider = REQUIRED + (
        f'provider "kafka" {{\n  bootstrap_servers = ["{bootstrap}"]\n  tls_enabled = false\n}}\n'
    )
    clicks = 12 if second else 6
    parts = [
        provider,
        _topic("orders", f"{prefix}-orders", 6 if second else 3),  # update
        _topic("payments", f"{prefix}-payments", 6 if second else 12),  # replace
        _topic("static", f"{prefix}-static", 6),  # no-op
        'module "streams" {\n  source = "./modules/streams"\n'
        f'  topics = {{ clicks = {{ name = "{prefix}-clicks", partitions = {clicks} }} }}\n}}\n',
        'resource "terraform_data" "other" {\n'
        f'  triggers_replace = ["{"two" if second else "one"}"]\n}}\n',  # another type
    ]
    if second:  # ledger moves into a module without a moved block: delete + create
        parts.append(
            'module "core" {\n  source = "./modules/core"\n'
            f'  name = "{prefix}-ledger"\n  partitions = 8\n}}\n'
        )
    else:
        parts.append(_topic("ledger", f"{prefix}-ledger", 8))
    return "".join(parts)


@pytest.fixture(scope="module")
def real_plan(
    bootstrap: str, tofu_env: tuple[str, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """``tofu show -json`` of a plan that updates, replaces, deletes and creates, moves a
    topic into a module, and leaves one alone; the topics are destroyed afterwards."""
    tofu, env = tofu_env
    work = tmp_path_factory.mktemp("tofu")
    for name, text in (("streams", STREAMS), ("core", CORE)):
        (work / "modules" / name).mkdir(parents=True)
        (work / "modules" / name / "main.tf").write_text(text)
    prefix = f"gate-{secrets.token_hex(3)}"
    main = work / "main.tf"
    main.write_text(_root(bootstrap, prefix, second=False))
    _run([tofu, "init", "-input=false", "-no-color"], work, env)  # the local modules
    _run([tofu, "apply", "-auto-approve", "-input=false", "-no-color"], work, env)
    try:
        main.write_text(_root(bootstrap, prefix, second=True))
        _run([tofu, "init", "-input=false", "-no-color"], work, env)  # module "core" is new
        _run([tofu, "plan", "-input=false", "-no-color", "-out=plan.tfplan"], work, env)
        plan = work / "plan.json"
        plan.write_text(_run([tofu, "show", "-json", "plan.tfplan"], work, env))
        if keep := os.environ.get("MIGCHECK_TOFU_OUT"):
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(plan, Path(keep) / "tofu-plan.json")
        yield plan
    finally:
        # best effort: a failed destroy must not hide why the plan failed
        subprocess.run(
            [tofu, "destroy", "-auto-approve", "-input=false", "-no-color"],
            cwd=work,
            env=env,
            capture_output=True,
            timeout=600,
            check=False,
        )


def _shape(value: Any, prefix: str = "") -> set[str]:
    """Every key path of ``value`` (array items as ``[]``): its shape, not its values."""
    paths = {prefix} if prefix else set()
    if isinstance(value, dict):
        for k, v in value.items():
            paths |= _shape(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for v in value:
            paths |= _shape(v, f"{prefix}[]")
    return paths


def test_the_real_plan_reads_into_the_expected_proposals(real_plan: Path) -> None:
    doc = json.loads(real_plan.read_text())
    prefix = next(
        rc["change"]["before"]["name"].rsplit("-", 1)[0]
        for rc in doc["resource_changes"]
        if rc["address"] == "kafka_topic.orders"
    )

    def source(address: str) -> Source:
        return Source(SourceKind.TERRAFORM, str(real_plan), address)

    found = read_proposals(terraform_plans=[str(real_plan)])
    assert sorted(found, key=lambda p: p.topic) == sorted(
        [
            Proposal(f"{prefix}-orders", 3, 6, source("kafka_topic.orders")),
            Proposal(
                f"{prefix}-payments",
                12,
                6,
                source("kafka_topic.payments"),
                destroys=True,
                destroy_reason="replace_because_cannot_update: partitions",
            ),
            Proposal(
                f"{prefix}-ledger",
                8,
                8,
                source("kafka_topic.ledger"),
                destroys=True,
                destroy_reason=(
                    "delete_because_no_resource_config; created again as "
                    "module.core.kafka_topic.ledger"
                ),
            ),
            Proposal(
                f"{prefix}-clicks", 6, 12, source('module.streams.kafka_topic.events["clicks"]')
            ),
        ],
        key=lambda p: p.topic,
    )


@pytest.mark.parametrize("address", sorted(ROLES))
def test_each_fixture_entry_has_the_real_entrys_shape(real_plan: Path, address: str) -> None:
    real = {rc["address"]: rc for rc in json.loads(real_plan.read_text())["resource_changes"]}
    fixture_file, index = ROLES[address]
    fixture = json.loads((TF / fixture_file).read_text())["resource_changes"][index]
    assert address in real, sorted(real)
    missing, extra = (
        _shape(real[address]) - _shape(fixture),
        _shape(fixture) - _shape(real[address]),
    )
    assert (sorted(missing), sorted(extra)) == ([], []), f"{fixture_file}[{index}] vs {address}"


#: Top-level keys Terraform writes and OpenTofu does not: ``applyable`` and ``complete``
#: came with Terraform 1.8 (the fixtures say Terraform 1.9.8).
TERRAFORM_ONLY = {"applyable", "complete"}


@pytest.mark.parametrize("fixture_file", sorted({f for f, _ in ROLES.values()}))
def test_each_fixtures_top_level_keys_are_real_ones(real_plan: Path, fixture_file: str) -> None:
    real = set(json.loads(real_plan.read_text()))
    assert set(json.loads((TF / fixture_file).read_text())) - real - TERRAFORM_ONLY == set()
