"""The online refusal of an app whose results depend on stream time.

The topologies are what a real Kafka Streams app's ``describe()`` prints
(fixtures/java/streams/describe/, checked by test_describe_fixtures).  The cleanup
policies are Kafka Streams' own: ``compact`` for a key-value store's changelog and
``compact,delete`` for a window or session store's (``WindowedChangelogTopicConfig``);
tests/integration/test_key_layouts.py reads them off a real app's changelogs.
"""

from __future__ import annotations

from pathlib import Path

from migcheck.apps.streamtime import changelogs, refusal, stream_time_reasons
from migcheck.frameworks.topology import Topology, parse_topology

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _topology(name: str) -> Topology:
    return parse_topology((DESCRIBE / f"{name}.txt").read_text(encoding="utf-8"))


def test_a_key_value_count_with_its_changelog_depends_on_nothing() -> None:
    policies = {"app-counts-changelog": "compact"}
    assert stream_time_reasons("app", policies, _topology("count")) == ()
    assert stream_time_reasons("app", policies, None) == ()


def test_a_window_store_changelog_is_refused_with_or_without_the_topology() -> None:
    policies = {"app-wcounts-changelog": "compact,delete"}
    expected = ("app-wcounts-changelog is a window or session store's changelog "
                "(cleanup.policy compact,delete)",)  # fmt: skip
    assert stream_time_reasons("app", policies, None) == expected
    assert stream_time_reasons("app", policies, _topology("windowed")) == expected


def test_a_suppression_is_named_from_the_topology() -> None:
    policies = {
        "app-wcounts-changelog": "compact,delete",
        "app-KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog": "compact",
    }
    reasons = stream_time_reasons("app", policies, _topology("windowed-suppress"))
    assert reasons[1:] == ("KTABLE-SUPPRESS-0000000002 suppresses by stream time",)


def test_a_store_without_a_changelog_cannot_be_told_apart_so_it_is_refused() -> None:
    reasons = stream_time_reasons("app", {}, _topology("count-nolog"))
    assert reasons == ("store counts logs to no changelog, so nothing shows whether it is "
                       "windowed",)  # fmt: skip


def test_a_global_store_has_no_task_and_no_changelog_and_is_no_reason() -> None:
    policies = {"app-table-store-changelog": "compact"}
    assert stream_time_reasons("app", policies, _topology("global")) == ()


def test_only_changelogs_are_kept_and_the_refusal_is_one_line() -> None:
    internal = ["app-counts-changelog", "app-rekey-group-repartition"]
    assert changelogs(internal) == ["app-counts-changelog"]
    line = refusal("--strategy online", ("store x logs to no changelog",))
    assert "\n" not in line and line.startswith("--strategy online: store x logs")
    assert line.endswith("use runbook --strategy new-topic")
