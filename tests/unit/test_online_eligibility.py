"""Whether an app can move online (apps/online.py), decided once for ``runbook
--strategy online`` and ``migrate``: the framework's shadow route, every source's whole
history, stream time, and the outputs."""

from __future__ import annotations

import pytest

from migcheck.apps.build import Facts
from migcheck.apps.discovery import Discovery
from migcheck.apps.online import check_online, online_outputs
from migcheck.errors import Refused, UsageError
from migcheck.frameworks.registry import FRAMEWORKS
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.model.readers import ReaderKind


def _disc(kind: ReaderKind = ReaderKind.KAFKA_STREAMS, start: int = 0, policy: str = "compact"):
    """The shop app: sources orders and clicks (clicks' partition 1 starts at ``start``),
    one changelog of cleanup.policy ``policy``."""
    changelog = "shop-counts-changelog"
    orders = (PartitionMeta(0, 0, 9), PartitionMeta(1, 0, 4))
    clicks = (PartitionMeta(0, 0, 3), PartitionMeta(1, start, 8))
    topics = {
        "orders": TopicMeta("orders", "delete", 2, orders),
        "clicks": TopicMeta("clicks", "delete", 2, clicks),
        changelog: TopicMeta(changelog, policy, 2),
    }
    facts = Facts("shop", {"orders": 2, "clicks": 2}, {changelog: 2}, framework=FRAMEWORKS[kind])
    return Discovery(facts, None, topics)


@pytest.mark.parametrize("kind", [ReaderKind.KAFKA_STREAMS, ReaderKind.KSQLDB])
def test_an_app_with_a_shadow_route_its_whole_history_and_no_stream_time_may_go(
    kind: ReaderKind,
) -> None:
    shadow = check_online("--strategy online", _disc(kind), None, accept_lost_history=False)
    assert shadow is FRAMEWORKS[kind].shadow


@pytest.mark.parametrize("kind", [ReaderKind.QUIX_STREAMS, ReaderKind.FAUST])
def test_a_framework_without_a_shadow_route_is_refused_saying_why(kind: ReaderKind) -> None:
    framework = FRAMEWORKS[kind]
    with pytest.raises(UsageError) as refused:
        check_online("migrate's shadow", _disc(kind), None, accept_lost_history=False)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"migrate's shadow: shop is {framework.label}: ")
    assert "against the real framework" in line and "--strategy new-topic" in line


def test_a_trimmed_second_source_is_refused_unless_accepted() -> None:
    """migrate looked at --topic alone: clicks, the app's other input, lost records too."""
    with pytest.raises(Refused) as refused:
        check_online("migrate's shadow", _disc(start=5), None, accept_lost_history=False)
    assert str(refused.value).startswith(
        "refused: migrate's shadow would rebuild the state of shop by reprocessing sources "
        "that no longer hold their whole history (clicks partition 1 from offset 5): up to 5 "
        "records deleted"
    )
    check_online("migrate's shadow", _disc(start=5), None, accept_lost_history=True)


def test_a_windowed_changelog_is_refused_by_stream_time() -> None:
    with pytest.raises(UsageError) as refused:
        check_online("--strategy online", _disc(policy="compact,delete"), None, False)
    assert str(refused.value).startswith(
        "--strategy online: shop-counts-changelog is a window or session store's changelog "
        "(cleanup.policy compact,delete)"
    )


def test_the_outputs_are_named_or_refused_in_one_line() -> None:
    assert online_outputs("--strategy online", ("totals", "", "totals"), None) == ["totals"]
    assert online_outputs("--strategy online", ("",), None) == []
    with pytest.raises(UsageError) as refused:
        online_outputs("migrate's shadow", (), None)
    assert str(refused.value) == (
        "migrate's shadow: name the app's output topics with --output-topic (repeatable; "
        "--output-topic '' if it writes none) or give its --topology"
    )
