"""``--accept FILE``: reading it strictly, and whether an acceptance covers a change or is
stale.  Every expected value here is written by hand from the issue's rules (42), never
computed by the code under test."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from migcheck.errors import UsageError
from migcheck.gate.acceptances import load_acceptances, match
from migcheck.model.gate import Acceptance, AcceptanceMatch, GateVerdict

TODAY = dt.date(2026, 11, 28)

ORDERS_6_CRASH = Acceptance("orders", 6, "CRASH", "runbook OPS-1 scheduled for the window")


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "accept.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


# Reading the file.


def test_reads_the_issues_example(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
accept:
  - topic: orders
    to: 6
    verdict: CRASH        # or a rule code
    reason: "runbook OPS-1 scheduled for the window"   # required
    expires: "2026-12-31" # optional
  - topic: payments
    to: 12
    verdict: MC303
    reason: lag is drained before the window
""",
    )
    assert load_acceptances(path) == [
        Acceptance("orders", 6, "CRASH", "runbook OPS-1 scheduled for the window", "2026-12-31"),
        Acceptance("payments", 12, "MC303", "lag is drained before the window", None),
    ]


def test_an_unquoted_date_is_a_date_too(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "accept:\n- {topic: t, to: 4, verdict: ORDER, reason: r, expires: 2027-01-05}\n",
    )
    assert load_acceptances(path)[0].expires == "2027-01-05"


def test_an_empty_list_accepts_nothing(tmp_path: Path) -> None:
    assert load_acceptances(_file(tmp_path, "accept: []\n")) == []


ENTRY = "  - topic: orders\n    to: 6\n    verdict: CRASH\n    reason: ok\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The place: entries count from 0, the line from 1.
        (
            "accept:\n" + ENTRY + "  - topic: orders\n    to: 6\n    verdict: CRASH\n",
            "accept.yaml:6: accept[1].reason: required",
        ),
        (
            "accept:\n" + ENTRY.replace("reason: ok", 'reason: "  "'),
            "accept.yaml:5: accept[0].reason: required: say why the change is accepted",
        ),
        (
            "accept:\n" + ENTRY.replace("reason: ok", "reasn: ok"),
            "accept.yaml:5: accept[0].reasn: unknown key (expected one of topic, to, "
            "verdict, reason, expires)",
        ),
        (
            "accept:\n" + ENTRY.replace("CRASH", "CRASHES"),
            "accept.yaml:4: accept[0].verdict: 'CRASHES' is neither a verdict (DATA_LOSS, "
            "CRASH, CORRUPT, STALL, LOSS_RISK, UNKNOWN, ORDER, REFUSED, MOVES, SAFE) nor a "
            "rule code (MC101..MC601, docs/rules.md)",
        ),
        (
            "accept:\n" + ENTRY.replace("CRASH", "MC999"),
            "accept.yaml:4: accept[0].verdict: 'MC999' is neither a verdict",
        ),
        (
            "accept:\n" + ENTRY.replace("to: 6", "to: 0"),
            "accept.yaml:3: accept[0].to: must be a positive integer, not 0",
        ),
        (
            "accept:\n" + ENTRY.replace("to: 6", 'to: "6"'),
            "accept.yaml:3: accept[0].to: must be a positive integer, not '6'",
        ),
        (
            "accept:\n" + ENTRY.replace("to: 6", "to: true"),
            "accept.yaml:3: accept[0].to: must be a positive integer, not True",
        ),
        (
            "accept:\n" + ENTRY + '    expires: "31/12/2026"\n',
            "accept.yaml:6: accept[0].expires: '31/12/2026' is not a date (YYYY-MM-DD)",
        ),
        (
            "accept:\n" + ENTRY + '    expires: "2026-02-30"\n',
            "accept.yaml:6: accept[0].expires: '2026-02-30' is not a date",
        ),
        (
            "accept:\n" + ENTRY.replace("topic: orders", "topic: 007"),
            "accept.yaml:2: accept[0].topic: must be a string",
        ),
        (
            "accept:\n" + ENTRY + "    to: 12\n",
            "accept.yaml:6: not valid YAML: duplicate key 'to'",
        ),
        ("accept:\n  - orders\n", "accept.yaml:2: accept[0]: expected a mapping"),
        ("accept:\n  topic: orders\n", "accept.yaml:2: accept: expected a list"),
        ("acept:\n" + ENTRY, "accept.yaml:2: acept: unknown key (only 'accept')"),
        ("", "accept.yaml: expected a mapping with the key 'accept'"),
        ("accept: [\n", "accept.yaml:2: not valid YAML"),
        (
            "accept: []\n---\naccept: []\n",
            "accept.yaml:2: not valid YAML: expected a single document in the stream",
        ),
        ("accept:\n", "accept.yaml:1: accept: expected a list of acceptances"),
        ("accept: !!python/object:os.system {}\n", "accept.yaml:1: not valid YAML"),
    ],
)
def test_a_malformed_file_is_one_line_naming_the_place(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(UsageError) as e:
        load_acceptances(path)
    said = str(e.value)
    assert "\n" not in said
    assert said.startswith(f"--accept {tmp_path}/")
    assert message in said


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        load_acceptances(str(tmp_path / "nope.yaml"))
    assert str(e.value) == f"--accept {tmp_path}/nope.yaml: no such file"


def test_a_file_name_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        load_acceptances(str(tmp_path / "a\nb.yaml"))
    assert "\n" not in str(e.value)
    assert "a\\nb.yaml" in str(e.value)


# Matching a change.


def test_covers_the_change_it_names() -> None:
    assert match([ORDERS_6_CRASH], "orders", 6, GateVerdict.CRASH, ["MC201"], TODAY) == (
        AcceptanceMatch(accepted=True, acceptance=ORDERS_6_CRASH, stale=())
    )


def test_another_target_count_makes_it_stale_by_to() -> None:
    found = match([ORDERS_6_CRASH], "orders", 12, GateVerdict.CRASH, ["MC201"], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=ORDERS_6_CRASH, stale=("to",))


def test_another_verdict_makes_it_stale_by_verdict() -> None:
    found = match([ORDERS_6_CRASH], "orders", 6, GateVerdict.CORRUPT, ["MC202"], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=ORDERS_6_CRASH, stale=("verdict",))


def test_a_rule_code_covers_a_change_that_carries_it() -> None:
    by_code = Acceptance("orders", 6, "MC303", "lag drained first")
    found = match([by_code], "orders", 6, GateVerdict.CRASH, ["MC201", "MC303"], TODAY)
    assert found == AcceptanceMatch(accepted=True, acceptance=by_code, stale=())


def test_a_rule_code_the_change_does_not_carry_is_stale() -> None:
    by_code = Acceptance("orders", 6, "MC303", "lag drained first")
    found = match([by_code], "orders", 6, GateVerdict.ORDER, ["MC501"], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=by_code, stale=("verdict",))


def test_valid_on_its_last_day_expired_the_day_after() -> None:
    until_today = Acceptance("orders", 6, "CRASH", "window", expires="2026-11-28")
    until_yesterday = Acceptance("orders", 6, "CRASH", "window", expires="2026-11-27")
    assert match([until_today], "orders", 6, GateVerdict.CRASH, [], TODAY).accepted
    found = match([until_yesterday], "orders", 6, GateVerdict.CRASH, [], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=until_yesterday, stale=("expires",))


def test_every_differing_field_is_named() -> None:
    old = Acceptance("orders", 6, "ORDER", "old window", expires="2026-01-31")
    found = match([old], "orders", 12, GateVerdict.CRASH, ["MC201"], TODAY)
    assert found.stale == ("to", "verdict", "expires")


def test_of_two_for_one_topic_the_covering_one_wins() -> None:
    to_12 = Acceptance("orders", 12, "CRASH", "second window")
    found = match([ORDERS_6_CRASH, to_12], "orders", 12, GateVerdict.CRASH, [], TODAY)
    assert found == AcceptanceMatch(accepted=True, acceptance=to_12, stale=())


def test_of_two_stale_ones_the_nearest_is_named() -> None:
    far = Acceptance("orders", 24, "ORDER", "far")
    near = Acceptance("orders", 24, "CRASH", "near")
    found = match([far, near], "orders", 12, GateVerdict.CRASH, [], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=near, stale=("to",))


def test_of_two_equally_near_the_first_in_the_file_is_named() -> None:
    first = Acceptance("orders", 24, "CRASH", "first")
    second = Acceptance("orders", 12, "ORDER", "second")
    found = match([first, second], "orders", 12, GateVerdict.CRASH, [], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=first, stale=("to",))


def test_another_topics_acceptance_is_neither_a_match_nor_stale() -> None:
    found = match([ORDERS_6_CRASH], "payments", 6, GateVerdict.CRASH, [], TODAY)
    assert found == AcceptanceMatch(accepted=False, acceptance=None, stale=())


def test_the_issues_proof_accepted_at_6_stale_at_12(tmp_path: Path) -> None:
    """The issue's proof: an acceptance turns 3 -> 6 to accepted, and the same one
    against 3 -> 12 is stale."""
    path = _file(
        tmp_path,
        "accept:\n  - topic: orders\n    to: 6\n    verdict: CRASH\n    reason: window\n",
    )
    accepted = load_acceptances(path)
    assert match(accepted, "orders", 6, GateVerdict.CRASH, ["MC201"], TODAY).accepted
    assert match(accepted, "orders", 12, GateVerdict.CRASH, ["MC201"], TODAY).stale == ("to",)
