"""The gate's verdicts, without a cluster: the order of the questions, the rule codes, the
next commands.  Expected values are written by hand from the issue's rules (a destroyed
topic is DATA_LOSS whatever its readers; a refused change never happens; else the worst
reader; MOVES when keys move and no reader is at risk)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from migcheck.gate.judge import app_reader, judge, plain_reader, unknown_reader
from migcheck.gate.next_steps import next_steps
from migcheck.model.app import AppLevel
from migcheck.model.gate import (
    GATE_RULES,
    SEVERITY,
    GateMoved,
    GateVerdict,
    Proposal,
    RuleCode,
    Source,
    SourceKind,
    worst,
)
from migcheck.model.readers import ReaderRisk

TF = Source(SourceKind.TERRAFORM, "plan.json", "module.kafka.kafka_topic.orders")
CHANGE = Source(SourceKind.CHANGE, None, "--change")
MOVED: GateMoved = {"keys": 205, "fraction": 0.5125, "records": 400, "bytes": 4000, "exact": True}
CRASHING = app_reader("kafka-streams", "shop", "CRASH", [("CRASH", "Existing internal topic ...")])
LOSING = plain_reader("consumer-group", "billing", [{"risk": ReaderRisk.LOSS_RISK, "text": "x"}])
QUIET = plain_reader("consumer-group", "audit", [])


def _codes(j) -> list[str]:
    return [r["code"] for r in j.rules]


def test_the_verdicts_are_ordered_worst_first_as_the_issue_lists_them() -> None:
    assert [v.value for v in SEVERITY] == [
        "DATA_LOSS", "CRASH", "CORRUPT", "STALL", "LOSS_RISK", "UNKNOWN", "ORDER", "REFUSED",
        "MOVES", "SAFE",
    ]  # fmt: skip
    assert worst([GateVerdict.ORDER, GateVerdict.CORRUPT, GateVerdict.MOVES]) == "CORRUPT"
    assert worst([]) == "SAFE"


def test_a_replace_is_data_loss_whatever_its_readers_say() -> None:
    p = Proposal("orders", 12, 6, TF, destroys=True, destroy_reason="replace_because_cannot_update")
    j = judge(p, 12, [QUIET], MOVED, None)
    assert (j.verdict, _codes(j), j.blocks) == ("DATA_LOSS", ["MC101"], True)
    assert "replace_because_cannot_update" in j.rules[0]["text"]
    deleted = judge(Proposal("orders", 12, None, TF, destroys=True), 12, [], None, None)
    assert _codes(deleted) == ["MC102"]


def test_a_refused_change_never_happens_so_its_readers_do_not_count() -> None:
    gitops = Proposal("orders", 6, 3, Source(SourceKind.KAFKA_GITOPS, "p.json", "orders"),
                      refused="kafka-gitops: decrease refused")  # fmt: skip
    assert judge(gitops, 6, [CRASHING], MOVED, None).verdict == "REFUSED"
    strimzi = Proposal("orders", None, 3, Source(SourceKind.STRIMZI, "t.yaml", "KafkaTopic/orders"))
    j = judge(strimzi, 6, [CRASHING], None, None)
    assert (j.verdict, _codes(j)) == ("REFUSED", ["MC401"])
    # Strimzi's words (its BatchingTopicController), as its KafkaTopic status shows them
    assert (
        "Ready=False, reason NotSupported: Decreasing partitions not supported"
        in (j.rules[0]["text"])
    )
    plain = judge(Proposal("orders", None, 3, CHANGE), 6, [], None, None)
    # what a 4.3 broker answers kafka-topics --alter --partitions 3 on a 6-partition topic
    assert _codes(plain) == ["MC402"] and plain.rules[0]["text"].endswith(
        "The topic orders currently has 6 partition(s); 3 would not be an increase."
    )
    conduktor = Source(SourceKind.CONDUKTOR, "c.yaml", "Topic/orders")
    grown = judge(Proposal("orders", None, 12, conduktor), 6, [CRASHING], MOVED, None)
    assert grown.verdict == "REFUSED" and "immutable" in grown.rules[0]["text"]


def test_a_growing_topic_is_its_worst_readers_verdict() -> None:
    p = Proposal("orders", None, 6, CHANGE)
    j = judge(p, 3, [QUIET, LOSING, CRASHING], MOVED, None)
    assert j.verdict == "CRASH" and _codes(j) == ["MC201", "MC301"]  # worst first
    assert j.rules[0]["doc"] == "docs/rules.md#mc201"


def test_moves_blocks_only_past_the_max_moved_fraction() -> None:
    p = Proposal("orders", None, 6, CHANGE)
    j = judge(p, 3, [QUIET], MOVED, None)
    assert (j.verdict, _codes(j), j.blocks) == ("MOVES", ["MC501"], False)
    j = judge(p, 3, [QUIET], MOVED, 0.5)
    assert (j.verdict, _codes(j), j.blocks) == ("MOVES", ["MC502"], True)
    nothing: GateMoved = {**MOVED, "keys": 0, "fraction": 0.0}
    assert judge(p, 3, [], nothing, None).verdict == "SAFE"


def test_a_plan_that_believes_another_count_is_drift_which_never_blocks() -> None:
    p = Proposal("orders", 4, 6, TF)
    j = judge(p, 3, [], MOVED, None)
    assert _codes(j) == ["MC501", "MC601"] and not j.blocks
    assert "the plan says orders has 4 partitions; the cluster has 3" in j.rules[1]["text"]


def test_unknown_and_app_readers_carry_their_codes() -> None:
    assert unknown_reader("kafka-streams", "a", "why")["rules"] == ["MC302"]
    assert app_reader("quix-streams", "q", "CORRUPT", [("CORRUPT", "r")])["verdict"] == "CORRUPT"
    assert app_reader("kafka-streams", "s", "SAFE", [])["rules"] == []
    assert set(GATE_RULES) >= {"MC201", "MC202", "MC301", "MC302", "MC303"}


def test_every_rule_code_is_in_the_table_once() -> None:
    """docs/rules.md's codes, by hand: each a RuleCode with its rule."""
    codes = ["MC101", "MC102", "MC201", "MC202", "MC203", "MC204", "MC301", "MC302", "MC303",
             "MC401", "MC402", "MC501", "MC502", "MC601"]  # fmt: skip
    assert [c.value for c in RuleCode] == codes
    assert sorted(GATE_RULES) == codes
    assert all(GATE_RULES[c].code is c for c in RuleCode)


def test_no_module_but_the_rule_table_writes_a_rule_code() -> None:
    """A code is written once, in model/gate.py: every other module names its RuleCode."""
    package = Path(__file__).resolve().parents[2] / "migcheck"
    literal = [
        f"{path.relative_to(package)}:{node.lineno}: {node.value}"
        for path in sorted(package.rglob("*.py"))
        if path != package / "model" / "gate.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"MC\d{3}", node.value)
    ]
    assert literal == []


def test_an_app_with_two_reasons_cites_both_each_with_its_own_rule() -> None:
    """The first error (a CRASH) and the split state its clean-up leaves (CORRUPT): both
    cited, worst first, before the plain reader's."""
    crash = "Existing internal topic shop-counts-changelog has invalid partitions"
    split = "CORRUPT after the clean-up the error leads to: counts read orders directly"
    app = app_reader("kafka-streams", "shop", "CRASH", [("CRASH", crash), ("CORRUPT", split)])
    assert (app["verdict"], app["rules"]) == (GateVerdict.CRASH, ["MC201", "MC202"])
    j = judge(Proposal("orders", None, 6, CHANGE), 3, [LOSING, app], MOVED, None)
    assert j.verdict is GateVerdict.CRASH and j.blocks
    assert list(j.rules) == [
        {"code": "MC201", "verdict": "CRASH", "text": f"kafka-streams shop: {crash}",
         "doc": "docs/rules.md#mc201"},
        {"code": "MC202", "verdict": "CORRUPT", "text": f"kafka-streams shop: {split}",
         "doc": "docs/rules.md#mc202"},
        {"code": "MC301", "verdict": "LOSS_RISK", "text": "consumer-group billing: x",
         "doc": "docs/rules.md#mc301"},
    ]  # fmt: skip


def test_a_corrupt_app_cites_each_of_its_split_stores() -> None:
    app = app_reader("kafka-streams", "shop", "CORRUPT", [("CORRUPT", "a"), ("CORRUPT", "b")])
    j = judge(Proposal("orders", None, 6, CHANGE), 3, [app], MOVED, None)
    assert [(r["code"], r["text"]) for r in j.rules] == [
        ("MC202", "kafka-streams shop: a"),
        ("MC202", "kafka-streams shop: b"),
    ]


def test_a_reason_of_a_level_the_gate_cannot_map_is_cited_as_unknown_not_dropped() -> None:
    app = app_reader("kafka-streams", "shop", "CORRUPT", [("CORRUPT", "a"), ("NEW", "b")])
    assert app["rules"] == ["MC202", "MC302"]


#: Each app verdict's gate verdict and rule, by hand from docs/rules.md: a new level fails
#: here until the gate maps it.
APP_EXPECTED = {
    AppLevel.CRASH: (GateVerdict.CRASH, ["MC201"]),
    AppLevel.CORRUPT: (GateVerdict.CORRUPT, ["MC202"]),
    AppLevel.SAFE: (GateVerdict.SAFE, []),
}
#: Each plain reader's risk as a gate verdict; APP belongs to a stateful app, so a plain
#: reader carrying it is one the gate cannot judge.
RISK_EXPECTED = {
    ReaderRisk.LOSS_RISK: (GateVerdict.LOSS_RISK, "MC301"),
    ReaderRisk.UNKNOWN: (GateVerdict.UNKNOWN, "MC302"),
    ReaderRisk.ORDER: (GateVerdict.ORDER, "MC303"),
    ReaderRisk.APP: (GateVerdict.UNKNOWN, "MC302"),
}


def test_every_app_verdict_is_mapped() -> None:
    assert set(APP_EXPECTED) == set(AppLevel)
    for level, (verdict, rules) in APP_EXPECTED.items():
        r = app_reader("kafka-streams", "s", level.value, [(level.value, "why")])
        assert (r["verdict"], r["rules"]) == (verdict, rules), level


def test_a_crash_that_is_the_unchecked_joins_stall_cites_mc203_and_blocks() -> None:
    """docs/rules.md: MC203, verdict STALL, blocks; the stall is a CRASH in the end
    (task.timeout.ms), so only a CRASH becomes it."""
    r = app_reader("kafka-streams", "s", "CRASH", [("CRASH", "joined topics ...")], stalls=True)
    assert (r["verdict"], r["rules"]) == (GateVerdict.STALL, ["MC203"])
    j = judge(Proposal("orders", None, 6, CHANGE), 3, [r], MOVED, None)
    assert j.verdict is GateVerdict.STALL and j.blocks
    corrupt = app_reader("kafka-streams", "s", "CORRUPT", [("CORRUPT", "split")], stalls=True)
    assert corrupt["rules"] == ["MC202"]


def test_the_gate_gives_an_apps_first_error_and_its_clean_ups_split_with_their_levels() -> None:
    from migcheck.commands.gate import _app_reasons

    cand = {"verdict": "CRASH", "error": "boom", "after_cleanup": "CORRUPT after ...",
            "reasons": [_reason("changelog"), _reason("unchecked-state", "CORRUPT")]}  # fmt: skip
    assert _app_reasons(cand) == [("CRASH", "boom"), ("CORRUPT", "CORRUPT after ...")]  # type: ignore[arg-type]
    cand = {"verdict": "CORRUPT", "error": None, "after_cleanup": None,
            "reasons": [_reason("a", "CORRUPT"), _reason("b", "CORRUPT")]}  # fmt: skip
    assert _app_reasons(cand) == [("CORRUPT", "a"), ("CORRUPT", "b")]  # type: ignore[arg-type]


def _reason(check: str, level: str = "CRASH") -> dict[str, object]:
    return {"level": level, "subtopology": 0, "text": check, "topics": [], "stores": [],
            "check": check}  # fmt: skip


@pytest.mark.parametrize(
    ("checks", "candidates", "stalls"),
    [
        (["unchecked-join"], None, True),
        (["unchecked-join", "unchecked-state"], None, True),
        (["copartition", "unchecked-join"], None, False),  # a real check throws first
        (["changelog"], None, False),
        (["unchecked-join"], [{"error": "x"}], False),  # another shape could come first
        ([], None, False),
    ],
)
def test_the_gate_cites_the_stall_only_when_it_is_the_certain_first_error(
    checks: list[str], candidates: object, stalls: bool
) -> None:
    from migcheck.commands.gate import _stalls

    reasons = [_reason(c, "CORRUPT" if c == "unchecked-state" else "CRASH") for c in checks]
    cand = {"verdict": "CRASH", "error": None, "reasons": reasons,
            "error_candidates": candidates}  # fmt: skip
    assert _stalls(cand) is stalls  # type: ignore[arg-type]


def test_every_plain_risk_is_mapped_and_none_is_dropped() -> None:
    assert set(RISK_EXPECTED) == set(ReaderRisk)
    for risk, (verdict, code) in RISK_EXPECTED.items():
        r = plain_reader("consumer-group", "g", [{"risk": risk, "text": "t"}])
        assert (r["verdict"], r["rules"], r["reasons"]) == (verdict, [code], ["t"]), risk


@pytest.mark.parametrize("level", ["STALL", "crash", "", "SOMETHING_NEW"])
def test_an_app_verdict_the_gate_cannot_map_blocks_as_unknown(level: str) -> None:
    r = app_reader("kafka-streams", "s", level, [(level, "why")])
    assert (r["verdict"], r["rules"]) == (GateVerdict.UNKNOWN, ["MC302"])
    assert repr(level) in r["reasons"][0]
    j = judge(Proposal("orders", None, 6, CHANGE), 3, [r], MOVED, None)
    assert j.verdict is GateVerdict.UNKNOWN and j.blocks


def test_a_risk_the_gate_has_no_rule_for_blocks() -> None:
    r = plain_reader("consumer-group", "g", [{"risk": "NEW_RISK", "text": "t"}])  # type: ignore[typeddict-item]
    assert (r["verdict"], r["rules"]) == (GateVerdict.UNKNOWN, ["MC302"])
    assert judge(Proposal("orders", None, 6, CHANGE), 3, [r], MOVED, None).blocks


def _words(line: str) -> list[str]:
    """The words bash reads from ``line`` (its first word a function printing them)."""
    script = "migcheck() { printf '%s\\0' migcheck \"$@\"; }; " + line
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return out.decode().split("\0")[:-1]


@pytest.mark.parametrize("hostile", ["shop; rm -rf /", "$(touch x)", "a'b", "--all-groups"])
def test_next_steps_pass_each_id_as_one_shell_word(hostile: str) -> None:
    p = Proposal("orders", None, 6, CHANGE)
    app = app_reader("kafka-streams", hostile, "CRASH", [("CRASH", "e")])
    group = plain_reader("consumer-group", hostile, [{"risk": ReaderRisk.ORDER, "text": "t"}])
    lines = next_steps("b:9092", "/etc/c.properties", p, GateVerdict.CRASH, [app, group])
    assert [_words(line) for line in lines] == [
        ["migcheck", "runbook", "--bootstrap-server", "b:9092", "--command-config",
         "/etc/c.properties", "--application-id", hostile, "--topic", "orders", "--to", "6"],
        ["migcheck", "runbook", "--bootstrap-server", "b:9092", "--command-config",
         "/etc/c.properties", "--group", hostile, "--topic", "orders", "--to", "6"],
    ]  # fmt: skip


@pytest.mark.parametrize("hostile", ["shop; rm -rf /", "$(touch x)", "a'b"])
def test_an_app_whose_remedies_lose_history_cites_mc204_and_its_next_step_names_the_way_out(
    hostile: str,
) -> None:
    lost = "every remedy (migcheck runbook, migrate) rebuilds the app's state by reprocessing"
    app = app_reader(
        "kafka-streams", hostile, "CRASH", [("CRASH", "e"), (RuleCode.REMEDY_LOSES_HISTORY, lost)]
    )
    assert (app["verdict"], app["rules"]) == (GateVerdict.CRASH, ["MC201", "MC204"])
    p = Proposal("orders", None, 6, CHANGE)
    j = judge(p, 3, [app], MOVED, None)
    assert [(r["code"], r["verdict"]) for r in j.rules] == [
        ("MC201", "CRASH"),
        ("MC204", "CORRUPT"),
    ]
    way_out, command = next_steps("b:9092", None, p, GateVerdict.CRASH, [app])
    assert way_out.startswith("# ") and "\n" not in way_out
    assert way_out.endswith(
        ": refused while its sources lack their whole history (MC204); add "
        "--accept-lost-history to rebuild its state without the deleted records"
    )
    assert _words(command) == [
        "migcheck", "runbook", "--bootstrap-server", "b:9092", "--application-id", hostile,
        "--topic", "orders", "--to", "6",
    ]  # fmt: skip
    assert _words(way_out) == []  # a comment: bash runs nothing of it


def test_a_destroyed_topic_says_terraforms_guard_and_has_no_runbook() -> None:
    p = Proposal("orders", 12, 6, TF, destroys=True)
    (reason,) = judge(p, 12, [], None, None).rules
    assert f"lifecycle {{ prevent_destroy = true }} on {TF.address}" in reason["text"]
    assert next_steps("b:9092", None, p, GateVerdict.DATA_LOSS, []) == []


def test_a_plan_widening_one_side_of_a_join_names_the_full_set_first() -> None:
    """Issue 71: the app's runbook refuses a split set, so the gate's next step names the
    topics that must widen together, and the command that judges them as one change."""
    p = Proposal("orders", None, 6, CHANGE)
    app = app_reader("kafka-streams", "shop", "CRASH", [("CRASH", "Topics not co-partitioned")])
    app["together"] = [["customers", "orders"]]
    first, judge_it, runbook = next_steps("b:9092", None, p, GateVerdict.CRASH, [app])
    assert first == (
        "# 'shop' joins customers, orders: widen customers with orders in the same change "
        "(co-partitioned); judge the set with:"
    )
    assert _words(judge_it) == ["migcheck", "app", "--application-id", "shop", "--topic",
                                "customers", "--topic", "orders", "--to", "6"]  # fmt: skip
    assert _words(runbook)[:2] == ["migcheck", "runbook"]
    # the plan widens both: nothing to add
    both = next_steps("b:9092", None, p, GateVerdict.CRASH, [app], {"customers": 6})
    assert [_words(line)[:2] for line in both] == [["migcheck", "runbook"]]
