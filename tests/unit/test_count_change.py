"""A proposed partition count against the current one: one comparison, each caller's answer.

Kafka can only add partitions.  ``compare_count`` says grow, same or shrink; the
commands keep the refusals they always gave: every ``check_can_grow`` caller lets an
equal count pass, the plain-consumer runbook refuses it.
"""

from __future__ import annotations

import pytest

from migcheck.commands import groups_runbook
from migcheck.commands.groups_runbook import GroupsRunbookOptions, run_groups_runbook
from migcheck.errors import NothingChanges, UsageError
from migcheck.kafka.metadata import TopicMeta
from migcheck.model.topics import CountChange, check_can_grow, check_changes, compare_count


@pytest.mark.parametrize(
    ("current", "proposed", "expected"),
    [
        (3, 6, CountChange.GROW),
        (1, 2, CountChange.GROW),
        (3, 3, CountChange.SAME),
        (1, 1, CountChange.SAME),
        (2**31 - 1, 2**31 - 1, CountChange.SAME),
        (6, 3, CountChange.SHRINK),
        (2, 1, CountChange.SHRINK),
    ],
)
def test_compare_count_says_grow_same_or_shrink(
    current: int, proposed: int, expected: CountChange
) -> None:
    assert compare_count(current, proposed) is expected


def test_the_answers_are_words_a_report_can_carry() -> None:
    assert [str(c) for c in CountChange] == ["grow", "same", "shrink"]


def test_check_can_grow_lets_more_and_equal_counts_pass() -> None:
    check_can_grow(6, [6, 8, 12])  # raises nothing


def test_check_can_grow_refuses_the_first_smaller_count_naming_the_option() -> None:
    with pytest.raises(UsageError) as e:
        check_can_grow(6, [8, 4, 2], "--to (topic 'orders')")
    assert str(e.value) == (
        "--to (topic 'orders') 4 is below the current 6 partitions: Kafka can only add partitions"
    )


class _PastTheCount(Exception):
    """Raised where the runbook goes on to find the groups: the count was accepted."""


@pytest.fixture
def topic_of_six(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain-consumer runbook sees ``orders`` with 6 partitions and no cluster."""
    monkeypatch.setattr(
        groups_runbook, "describe_topics", lambda client, topics: [TopicMeta("orders", "delete", 6)]
    )

    def past(*args: object) -> None:
        raise _PastTheCount

    monkeypatch.setattr(groups_runbook, "plain_groups", past)


@pytest.mark.usefixtures("topic_of_six")
def test_the_groups_runbook_refuses_a_smaller_count() -> None:
    with pytest.raises(UsageError) as e:
        run_groups_runbook(GroupsRunbookOptions(topic="orders", to=4))
    assert str(e.value) == (
        "--to (topic 'orders') 4 is below the current 6 partitions: Kafka can only add partitions"
    )


@pytest.mark.usefixtures("topic_of_six")
def test_the_groups_runbook_says_an_equal_count_changes_nothing() -> None:
    with pytest.raises(NothingChanges) as e:
        run_groups_runbook(GroupsRunbookOptions(topic="orders", to=6))
    assert str(e.value) == "nothing changes: orders has 6 partitions already (--to 6)"
    assert e.value.exit_code == 0


def test_check_changes_lets_a_change_of_any_topic_pass() -> None:
    check_changes({"orders": 6, "payments": 4}, [6])  # payments grows: raises nothing
    check_changes({"orders": 6}, [6, 8])  # 8 grows: raises nothing


def test_check_changes_says_nothing_changes_for_every_topic_at_the_count() -> None:
    with pytest.raises(NothingChanges) as e:
        check_changes({"orders": 6, "payments": 6}, [6])
    assert str(e.value) == "nothing changes: orders, payments have 6 partitions already (--to 6)"


@pytest.mark.usefixtures("topic_of_six")
def test_the_groups_runbook_goes_on_with_a_larger_count() -> None:
    with pytest.raises(_PastTheCount):
        run_groups_runbook(GroupsRunbookOptions(topic="orders", to=7))
