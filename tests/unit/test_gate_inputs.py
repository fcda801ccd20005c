"""The gate's four input forms read into Proposals: no broker, no Spark, no JVM.

Every expected value is written out by hand from the fixture it names (fixtures/gate/),
never computed by the code under test.  A malformed input must give one line that names
the file and the place in it, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkatest import REPO

from migcheck.errors import UsageError
from migcheck.gate.inputs import (
    CONDUKTOR_DECREASE,
    GITOPS_DECREASE,
    KAFKA_DECREASE,
    STRIMZI_DECREASE,
    STRIMZI_DECREASE_REASON,
    read_proposals,
)
from migcheck.model.gate import Proposal, Source, SourceKind

GATE = REPO / "fixtures" / "gate"
TF = GATE / "terraform"
MANIFESTS = GATE / "manifests"
GITOPS = GATE / "kafka-gitops" / "plan.json"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tf(name: str) -> list[Proposal]:
    return read_proposals(terraform_plans=[str(TF / name)])


def _tf_source(name: str, address: str) -> Source:
    return Source(SourceKind.TERRAFORM, str(TF / name), address)


def _error(**inputs: Any) -> str:
    """The one-line message a malformed input gets."""
    with pytest.raises(UsageError) as caught:
        read_proposals(**inputs)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message
    return message


# --- Terraform ------------------------------------------------------------------------


def test_an_update_proposes_both_counts() -> None:
    assert _tf("update.json") == [
        Proposal("orders", 3, 6, _tf_source("update.json", "kafka_topic.orders"))
    ]


def test_a_replace_destroys_the_topic_in_terraforms_words() -> None:
    assert _tf("replace.json") == [
        Proposal(
            "payments",
            12,
            6,
            _tf_source("replace.json", "kafka_topic.payments"),
            destroys=True,
            destroy_reason="replace_because_cannot_update: partitions",
        )
    ]


def test_a_delete_pairs_with_a_create_of_the_same_topic_and_a_pure_delete_has_no_after() -> None:
    assert _tf("delete-create.json") == [
        Proposal(
            "ledger",
            8,
            8,
            _tf_source("delete-create.json", "kafka_topic.ledger"),
            destroys=True,
            destroy_reason=(
                "delete_because_no_resource_config; created again as module.core.kafka_topic.ledger"
            ),
        ),
        Proposal(
            "scratch-old",
            1,
            None,
            _tf_source("delete-create.json", 'kafka_topic.scratch["old"]'),
            destroys=True,
            destroy_reason="delete_because_each_key",
        ),
    ]


def test_no_ops_and_data_source_reads_propose_nothing() -> None:
    assert _tf("no-op.json") == []


def test_a_topic_in_a_module_keeps_its_whole_address() -> None:
    assert _tf("module.json") == [
        Proposal(
            "clicks",
            6,
            12,
            _tf_source("module.json", 'module.streams.kafka_topic.events["clicks"]'),
        )
    ]


def test_other_resource_types_are_skipped_even_when_replaced() -> None:
    assert _tf("other-type.json") == []


def test_a_removed_confluent_partitions_count_is_the_default_six_and_a_replace() -> None:
    assert _tf("confluent-default.json") == [
        Proposal(
            "orders",
            12,
            6,
            _tf_source("confluent-default.json", "confluent_kafka_topic.orders"),
            destroys=True,
            destroy_reason="replace_because_cannot_update: partitions_count",
        ),
        Proposal(
            "clicks", 6, 12, _tf_source("confluent-default.json", "confluent_kafka_topic.clicks")
        ),
    ]


def _plan(tmp_path: Path, change: dict[str, Any], **top: Any) -> str:
    """A one-resource plan file: ``kafka_topic.t`` with ``change``."""
    doc = {
        "format_version": "1.2",
        "resource_changes": [
            {
                "address": "kafka_topic.t",
                "mode": "managed",
                "type": "kafka_topic",
                "name": "t",
                "provider_name": "registry.terraform.io/mongey/kafka",
                "change": change,
            }
        ],
        **top,
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _update(before: Any, after: Any, **extra: Any) -> dict[str, Any]:
    return {
        "actions": ["update"],
        "before": {"name": "t", "partitions": before},
        "after": {"name": "t", "partitions": after},
        **extra,
    }


def test_an_update_that_keeps_the_count_proposes_nothing(tmp_path: Path) -> None:
    assert read_proposals(terraform_plans=[_plan(tmp_path, _update(4, 4))]) == []


def test_a_count_that_is_not_a_positive_int_names_its_json_path(tmp_path: Path) -> None:
    path = _plan(tmp_path, _update(3, "6"))
    assert _error(terraform_plans=[path]) == (
        f"{path}: resource_changes[0].change.after.partitions: '6' is not a partition "
        "count (an integer)"
    )
    path = _plan(tmp_path, _update(0, 6))
    assert _error(terraform_plans=[path]) == (
        f"{path}: resource_changes[0].change.before.partitions: 0 is not a partition "
        "count (1 to 2147483647)"
    )


def test_a_count_unknown_until_apply_cannot_be_judged(tmp_path: Path) -> None:
    change = _update(3, None, after_unknown={"partitions": True})
    path = _plan(tmp_path, change)
    assert _error(terraform_plans=[path]) == (
        f"{path}: resource_changes[0].change.after.partitions: unknown until apply "
        "(after_unknown): nothing to judge"
    )


def test_an_unsupported_format_version_and_a_state_file_are_refused(tmp_path: Path) -> None:
    path = _plan(tmp_path, _update(3, 6), format_version="2.0")
    assert _error(terraform_plans=[path]) == (
        f"{path}: format_version: '2.0' is not a version this reads (1.x)"
    )
    state = tmp_path / "state.json"
    state.write_text('{"format_version": "1.0", "terraform_version": "1.9.8", "values": {}}')
    assert _error(terraform_plans=[str(state)]) == (
        f"{state}: (top level): no resource_changes: a state, not a plan "
        "(terraform show -json PLANFILE)"
    )


def test_text_that_is_not_json_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{\n  "format_version": "1.2",\n  "resource_changes": [\n}\n')
    assert _error(terraform_plans=[str(path)]) == (
        f"{path}: line 4, column 1: not JSON (Expecting value)"
    )


def test_a_missing_file_and_a_directory_are_one_line_each(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert _error(terraform_plans=[str(missing)]) == (f"{missing}: no such file (--terraform-plan)")
    assert _error(terraform_plans=[str(tmp_path)]) == (
        f"{tmp_path}: is a directory, not a file (--terraform-plan)"
    )


def test_a_resource_of_the_wrong_shape_names_its_place(tmp_path: Path) -> None:
    path = _plan(tmp_path, {"actions": "update"})
    assert _error(terraform_plans=[path]) == (
        f"{path}: resource_changes[0].change.actions: 'update' is not an array"
    )


# --- manifests ------------------------------------------------------------------------


def _manifest(name: str, address: str, kind: SourceKind = SourceKind.STRIMZI) -> Source:
    return Source(kind, str(MANIFESTS / name), address)


def test_a_strimzi_v1beta2_topic_is_its_metadata_name_with_no_before() -> None:
    assert read_proposals(manifests=[str(MANIFESTS / "strimzi-v1beta2.yaml")]) == [
        Proposal("orders", None, 6, _manifest("strimzi-v1beta2.yaml", "KafkaTopic/orders"))
    ]


def test_a_strimzi_v1_topic_name_comes_from_spec_topic_name() -> None:
    assert read_proposals(manifests=[str(MANIFESTS / "strimzi-v1.yaml")]) == [
        Proposal("Payments.V1", None, 3, _manifest("strimzi-v1.yaml", "KafkaTopic/payments-v1"))
    ]


def test_a_conduktor_topic_carries_its_cluster() -> None:
    assert read_proposals(manifests=[str(MANIFESTS / "conduktor.yaml")]) == [
        Proposal(
            "click.event-stream.avro",
            None,
            6,
            _manifest(
                "conduktor.yaml",
                "Topic/click.event-stream.avro (cluster shadow-it)",
                SourceKind.CONDUKTOR,
            ),
        )
    ]


def test_a_multi_document_file_reads_its_topics_and_skips_the_rest() -> None:
    # document 1 a ConfigMap, 3 empty, 4 a KafkaTopic without spec.partitions, 5 Redpanda's Topic
    assert read_proposals(manifests=[str(MANIFESTS / "multi.yaml")]) == [
        Proposal("ledger", None, 4, _manifest("multi.yaml", "KafkaTopic/ledger (document 2)")),
        Proposal(
            "invoices",
            None,
            12,
            _manifest(
                "multi.yaml", "Topic/invoices (cluster prod, document 6)", SourceKind.CONDUKTOR
            ),
        ),
    ]


def test_a_non_topic_kind_proposes_nothing() -> None:
    assert read_proposals(manifests=[str(MANIFESTS / "deployment.yaml")]) == []


def test_a_directory_is_searched_recursively_in_sorted_order() -> None:
    found = read_proposals(manifests=[str(MANIFESTS)])
    assert [
        (p.topic, p.after, Path(p.source.file or "").name, p.source.address) for p in found
    ] == [
        (
            "click.event-stream.avro",
            6,
            "conduktor.yaml",
            "Topic/click.event-stream.avro (cluster shadow-it)",
        ),
        ("ledger", 4, "multi.yaml", "KafkaTopic/ledger (document 2)"),
        ("invoices", 12, "multi.yaml", "Topic/invoices (cluster prod, document 6)"),
        ("shipments", 8, "list.yml", "KafkaTopic/shipments (items[0])"),
        ("Payments.V1", 3, "strimzi-v1.yaml", "KafkaTopic/payments-v1"),
        ("orders", 6, "strimzi-v1beta2.yaml", "KafkaTopic/orders"),
    ]


def _yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "topics.yaml"
    path.write_text(text)
    return str(path)


TOPIC = "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaTopic\nmetadata:\n  name: t\n"


def test_a_bad_count_names_the_document_and_field(tmp_path: Path) -> None:
    path = _yaml(tmp_path, f"{TOPIC}spec:\n  partitions: 3\n---\n{TOPIC}spec:\n  partitions: six\n")
    assert _error(manifests=[path]) == (
        f"{path}: document 2, spec.partitions: 'six' is not a partition count (an integer)"
    )
    path = _yaml(tmp_path, f"{TOPIC}spec:\n  partitions: 0\n")
    assert _error(manifests=[path]) == (
        f"{path}: spec.partitions: 0 is not a partition count (1 to 2147483647)"
    )


def test_a_wrong_shape_names_its_field(tmp_path: Path) -> None:
    path = _yaml(tmp_path, f"{TOPIC}spec: [1, 2]\n")
    assert _error(manifests=[path]) == f"{path}: spec: [1, 2] is not an object"
    nameless = (
        "apiVersion: kafka/v2\nkind: Topic\nmetadata:\n  cluster: c\nspec:\n  partitions: 3\n"
    )
    path = _yaml(tmp_path, nameless)
    assert _error(manifests=[path]) == (
        f"{path}: metadata.name: null is not a name (a non-empty string)"
    )
    countless = "apiVersion: kafka/v2\nkind: Topic\nmetadata:\n  name: t\nspec: {}\n"
    path = _yaml(tmp_path, countless)
    assert _error(manifests=[path]) == (
        f"{path}: spec.partitions: null is not a partition count (an integer)"
    )


def test_text_that_is_not_yaml_names_the_line_and_column(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "kind: KafkaTopic\nspec: {partitions: 3\n")
    message = _error(manifests=[path])
    assert message.startswith(f"{path}: line 3, column 1: not YAML (")


def test_a_missing_manifest_path_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    assert _error(manifests=[str(missing)]) == (
        f"{missing}: no such file or directory (--manifests)"
    )


# --- kafka-gitops ---------------------------------------------------------------------


def _gitops_source(address: str) -> Source:
    return Source(SourceKind.KAFKA_GITOPS, str(GITOPS), address)


def test_a_kafka_gitops_plan_gives_updates_a_refused_decrease_and_a_remove() -> None:
    # topicPlans[1] changes configs only, [2] is NO_CHANGE, [3] creates a topic
    assert read_proposals(gitops_plans=[str(GITOPS)]) == [
        Proposal("orders", 3, 6, _gitops_source("topicPlans[0]")),
        Proposal(
            "ledger",
            8,
            4,
            _gitops_source("topicPlans[4]"),
            refused=(
                "Removing the partition number is not supported by Apache Kafka "
                "(topic: ledger (8 -> 4))"
            ),
        ),
        Proposal(
            "old-topic",
            None,
            None,
            _gitops_source("topicPlans[5]"),
            destroys=True,
            destroy_reason="REMOVE: not in the desired state",
        ),
    ]


def _gitops(tmp_path: Path, doc: Any) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_malformed_kafka_gitops_plan_names_its_place(tmp_path: Path) -> None:
    path = _gitops(tmp_path, {"aclPlans": []})
    assert _error(gitops_plans=[path]) == f"{path}: topicPlans: missing: not a kafka-gitops plan"
    details = {"partitions": 6, "previousPartitions": None, "partitionsAction": "UPDATE"}
    path = _gitops(
        tmp_path, {"topicPlans": [{"name": "t", "action": "UPDATE", "topicDetailsPlan": details}]}
    )
    assert _error(gitops_plans=[path]) == (
        f"{path}: topicPlans[0].topicDetailsPlan.previousPartitions: null is not a "
        "partition count (an integer)"
    )
    path = _gitops(tmp_path, {"topicPlans": [{"name": "t", "action": "DROP"}]})
    assert _error(gitops_plans=[path]) == (
        f"{path}: topicPlans[0].action: 'DROP' is not one of ADD, UPDATE, REMOVE, NO_CHANGE"
    )


# --- --change -------------------------------------------------------------------------


def test_a_change_is_a_plain_proposal() -> None:
    assert read_proposals(changes=["orders=12", "a.b-c_d=1"]) == [
        Proposal("orders", None, 12, Source(SourceKind.CHANGE, None, "--change")),
        Proposal("a.b-c_d", None, 1, Source(SourceKind.CHANGE, None, "--change")),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("orders", "--change 'orders': expected TOPIC=N"),
        ("=3", "--change '=3': expected TOPIC=N"),
        ("orders=0", "--change 'orders=0': '0' is not a partition count (1 to 2147483647)"),
        ("orders=-1", "--change 'orders=-1': '-1' is not a partition count (1 to 2147483647)"),
        ("orders=six", "--change 'orders=six': 'six' is not a partition count (1 to 2147483647)"),
        ("orders=", "--change 'orders=': '' is not a partition count (1 to 2147483647)"),
        (
            "orders=2147483648",
            "--change 'orders=2147483648': '2147483648' is not a partition count (1 to 2147483647)",
        ),
    ],
)
def test_a_bad_change_is_one_usage_error_line(text: str, message: str) -> None:
    assert _error(changes=[text]) == message


# --- all together ---------------------------------------------------------------------


def test_every_form_in_the_order_given() -> None:
    found = read_proposals(
        terraform_plans=[str(TF / "module.json"), str(TF / "update.json")],
        manifests=[str(MANIFESTS / "strimzi-v1.yaml")],
        gitops_plans=[str(GITOPS)],
        changes=["orders=9"],
    )
    assert [(p.source.kind, p.topic, p.after) for p in found] == [
        (SourceKind.TERRAFORM, "clicks", 12),
        (SourceKind.TERRAFORM, "orders", 6),
        (SourceKind.STRIMZI, "Payments.V1", 3),
        (SourceKind.KAFKA_GITOPS, "orders", 6),
        (SourceKind.KAFKA_GITOPS, "ledger", 4),
        (SourceKind.KAFKA_GITOPS, "old-topic", None),
        (SourceKind.CHANGE, "orders", 9),
    ]


def test_the_operators_own_words_are_theirs() -> None:
    """Copied by hand from the tools' source and docs (see the modules' docstrings)."""
    assert STRIMZI_DECREASE == "Decreasing partitions not supported"
    assert STRIMZI_DECREASE_REASON == "NotSupported"
    assert CONDUKTOR_DECREASE == (
        "spec.replicationFactor and spec.partitions are immutable and cannot be modified "
        "once the topic is created"
    )
    assert KAFKA_DECREASE.format(topic="t", before=4, after=3) == (
        "The topic t currently has 4 partition(s); 3 would not be an increase."
    )
    assert GITOPS_DECREASE.format(topic="t", before=6, after=2) == (
        "Removing the partition number is not supported by Apache Kafka (topic: t (6 -> 2))"
    )


# --- hostile input --------------------------------------------------------------------


def _answers_or_one_line(path: Path, form: str) -> None:
    try:
        read_proposals(**{form: [str(path)]})
    except UsageError as e:
        message = str(e)
        assert "\n" not in message and "\r" not in message
        assert message.startswith(str(path))


@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_answer_or_fail_in_one_line(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "input"
    path.write_bytes(data)
    for form in ("terraform_plans", "manifests", "gitops_plans"):
        _answers_or_one_line(path, form)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += _paths(v, (*prefix, i))
    return found


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = list(doc) if isinstance(doc, list) else dict(doc)
    copy[head] = _replace(doc[head], tuple(rest), value)
    return copy


FUZZED = [
    (TF / "confluent-default.json", "terraform_plans"),
    (TF / "delete-create.json", "terraform_plans"),
    (GITOPS, "gitops_plans"),
]


@FUZZ
@pytest.mark.parametrize(("fixture", "form"), FUZZED, ids=lambda v: getattr(v, "name", v))
@given(data=st.data())
def test_a_fixture_with_any_value_replaced_answers_or_fails_in_one_line(
    tmp_path_factory: Any, fixture: Path, form: str, data: st.DataObject
) -> None:
    doc = json.loads(fixture.read_text())
    where = data.draw(st.sampled_from(_paths(doc)))
    mutated = _replace(doc, where, data.draw(json_values))
    path = tmp_path_factory.mktemp("fuzz") / "plan.json"
    path.write_text(json.dumps(mutated))
    _answers_or_one_line(path, form)


@pytest.mark.parametrize(
    ("form", "what"),
    [("terraform_plans", "JSON"), ("gitops_plans", "JSON"), ("manifests", "YAML")],
)
def test_input_nested_too_deep_is_one_line_not_a_recursion_error(
    tmp_path: Path, form: str, what: str
) -> None:
    path = tmp_path / "deep"
    path.write_text("[" * 200_000)
    assert _error(**{form: [str(path)]}) == (
        f"{path}: not {what} this tool can read (nested too deep)"
    )
