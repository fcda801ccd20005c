"""The parallelism figures, checked by hand arithmetic on small cases.

Every expected value here is worked out on paper from how Kafka Streams
assigns work (one task per partition of each sub-topology, tasks balanced over
instances by threads, then over each instance's threads), never taken from
migcheck; tests/integration/test_plan_streams.py holds the same figures to a real app.
"""

from __future__ import annotations

from pathlib import Path

from migcheck.apps.advice import recommend
from migcheck.apps.build import offline
from migcheck.apps.parallelism import (
    Deployment,
    Instance,
    even_counts,
    figures,
    imbalance,
    instance_of,
    observed,
    spread,
    uniform,
    weighted,
)
from migcheck.apps.rules import external_counts
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS
from migcheck.frameworks.topology import parse_topology
from migcheck.kafka.groups import Member

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"


def _app(name: str, **partitions: int):
    text = (DESCRIBE / f"{name}.txt").read_text(encoding="utf-8")
    counts = {k.replace("_", "-"): v for k, v in partitions.items()}
    return offline("shop", parse_topology(text), counts, KAFKA_STREAMS).app


def _figures(name: str, deployment: Deployment, replicas: int = 0, **partitions: int):
    app = _app(name, **partitions)
    return figures(app, external_counts(app), deployment, replicas)


def test_ten_tasks_on_three_instances_split_4_3_3() -> None:
    f = _figures("count", uniform(3, 1), orders=10)
    assert f.tasks == 10 and f.ceiling == 10
    assert f.tasks_per_instance == (4, 3, 3)
    assert f.imbalance_pct == 33  # 4 is a third more than 3
    assert f.even_instances == (2, 5)
    assert (f.active_threads, f.idle_threads) == (3, 0)
    assert f.threads_needed == 4 and f.instances_needed == 10


def test_threads_beyond_the_tasks_are_idle() -> None:
    f = _figures("count", uniform(3, 3), orders=6)
    assert f.threads == 9
    assert (f.active_threads, f.idle_threads) == (6, 3)
    assert f.tasks_per_instance == (2, 2, 2)
    assert f.tasks_per_thread == (1,) * 6 + (0,) * 3
    assert "already has its own thread (3 threads idle)" in recommend(f)


def test_two_subtopologies_double_the_tasks_not_the_ceiling() -> None:
    f = _figures("rekey-count", uniform(2, 4), orders=6)
    assert f.subtopology_tasks == {0: 6, 1: 6}
    assert f.tasks == 12 and f.ceiling == 6
    assert f.tasks_per_instance == (6, 6)
    assert f.tasks_per_thread == (2, 2, 2, 2, 1, 1, 1, 1)
    text = recommend(f)
    assert text.startswith("More threads, no partition change: 8 threads run 12 tasks")
    assert "num.stream.threads=6 on each of the 2 instances" in text
    assert "run 3 instances of 4 threads" in text


def test_a_fixed_repartition_topic_caps_what_reads_it() -> None:
    f = _figures("rekey-count-fixed", uniform(1, 1), orders=6, rekey_repartition=3)
    assert f.subtopology_tasks == {0: 6, 1: 3}
    (narrow,) = f.narrow
    assert narrow.topic == "shop-rekey-repartition"
    assert (narrow.partitions, narrow.upstream_tasks) == (3, 6)
    assert narrow.downstream == (1,) and narrow.stores == ("counts",)
    assert "state migration for the stores downstream (counts)" in recommend(f)


def test_standbys_copy_stateful_tasks_on_other_instances_only() -> None:
    # rekey-count: only sub-topology 1 holds a store, 6 tasks; 2 instances hold 1 replica
    f = _figures("rekey-count", uniform(2, 1), replicas=2, orders=6)
    assert f.stateful == (1,)
    assert (f.standby.tasks, f.standby.unplaced) == (6, 6)
    assert f.standby.restore_records is None  # offline: no changelog sizes
    app = _app("count", orders=3)
    live = figures(app, {"orders": 3}, uniform(3, 1), 1, {"shop-counts-changelog": [10, 20, 5]})
    assert (live.standby.tasks, live.standby.restore_records) == (3, 35)
    assert live.standby.largest_task_records == 20


def test_the_global_store_generates_no_task() -> None:
    f = _figures("global", uniform(1, 2), orders=4, customers=3)
    assert f.tasks == 4


def test_balance_follows_threads_between_unequal_instances() -> None:
    assert weighted(9, [1, 2]) == [3, 6]
    assert weighted(10, [1, 1, 1]) == [4, 3, 3]
    assert spread(7, 3) == [3, 2, 2] and spread(0, 2) == [0, 0] and spread(5, 0) == []
    d = Deployment((Instance("a", 1), Instance("b", 2)))
    f = _figures("count", d, orders=9)
    assert f.tasks_per_instance == (6, 3) and f.tasks_per_thread == (3, 3, 3)


def test_even_counts_and_imbalance() -> None:
    assert even_counts(12, 5) == (4, 6)
    assert even_counts(7, 3) == (1, 7)
    assert even_counts(5, 6) == (5,)  # more instances than tasks: fewer is the only even
    assert even_counts(6, 3) == (3,)
    assert imbalance([4, 3, 3]) == 33 and imbalance([6, 0]) is None and imbalance([2, 2]) == 0


def test_instances_come_from_client_ids_or_process_ids() -> None:
    uuid = "7e53e756-1313-4ac4-91a6-b59e28f0db79"
    classic = Member("m1", f"shop-{uuid}-StreamThread-2-consumer", "/10.0.0.1")
    assert instance_of(classic) == f"shop-{uuid}"
    custom = Member("m2", "pod-7-StreamThread-1-consumer", "/10.0.0.2")
    assert instance_of(custom) == "pod-7"
    streams = Member("m3", "whatever", "/10.0.0.3", process_id="p-1")
    assert instance_of(streams) == "p-1"
    assert instance_of(Member("m4", "kcat", "/h")) == "kcat"


def test_observed_tasks_from_classic_partitions_and_streams_tasks() -> None:
    app = _app("rekey-count", orders=4)
    repartition = "shop-rekey-group-repartition"
    a1 = Member("1", "a-StreamThread-1-consumer", "h", (("orders", 0), (repartition, 0)))
    a2 = Member(
        "2", "a-StreamThread-2-consumer", "h", (("orders", 1), ("orders", 3), (repartition, 1))
    )
    b1 = Member("3", "b-StreamThread-1-consumer", "h", (("orders", 2), (repartition, 2)))
    b2 = Member("4", "b-StreamThread-2-consumer", "h", ((repartition, 3),))
    d = observed(app, [a1, a2, b1, b2])
    assert [(i.name, i.threads, i.thread_tasks) for i in d.instances] == [
        ("a", 2, (2, 3)),
        ("b", 2, (2, 1)),
    ]
    f = figures(app, external_counts(app), d)
    assert f.observed and f.tasks_per_instance == (5, 3) and f.tasks_per_thread == (3, 2, 2, 1)
    s = Member("5", "c", "h", process_id="p", active_tasks={"0": (0, 1), "1": (2,)})
    assert observed(app, [s]).instances[0].thread_tasks == (3,)


def test_a_member_without_tasks_is_an_idle_thread() -> None:
    app = _app("count", orders=2)
    busy = Member("1", "a-StreamThread-1-consumer", "h", (("orders", 0), ("orders", 1)))
    idle = Member("2", "a-StreamThread-2-consumer", "h")
    f = figures(app, external_counts(app), observed(app, [busy, idle]))
    assert (f.threads, f.active_threads, f.idle_threads) == (2, 1, 1)
