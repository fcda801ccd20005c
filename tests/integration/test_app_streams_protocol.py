"""`migcheck app` on the streams protocol (KIP-1071): a real Kafka Streams 4.3 app stopped
during the alter, and one running through it, do what the verdict says.

FINDINGS.md ("Streams protocol through an alter, stopped and running (4.3)") records the
runs these tests repeat.  Stopped or running, the count app with a changelog throws the
TopologyException migcheck quotes, at its next heartbeat: CRASH under Kafka Streams'
default handler (the fixture's handler returns SHUTDOWN_CLIENT, as that default does).  A
handler that returns REPLACE_THREAD stalls the app instead, as ``error_when`` says.
Without a changelog the running app rebalances to 6 tasks and runs on, its state split:
CORRUPT.  What the app does comes from the app (its lines, its stores) and from
kafka-python's murmur2, never from migcheck.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from kafkatest import Kafka
from streamsapp import TOPOLOGY_EXCEPTION, Live, StreamsApp, moved_keys, phase1, phase2

pytestmark = pytest.mark.kafka

RUNNING = "STATE-CHANGE REBALANCING -> RUNNING"
#: The broker's group.streams.heartbeat.interval.ms is 5 s: the error comes within one
#: beat of the alter; the rest is slack for a loaded machine.
WITHIN_S = 15
#: KafkaConsumer.close()'s default timeout, which Kafka Streams' shutdown waits out.
CLOSE_S = 30


def _app(kafka: Kafka, topology: str) -> StreamsApp:
    app = StreamsApp(kafka, topology, protocol="streams")
    app.produce(app.input, phase1())
    return app


def _verdict(app: StreamsApp, tmp_path: Path, to: int = 6) -> tuple[int, dict]:
    topology = app.describe(tmp_path / f"{app.topology}.txt")
    args = ("--topology", str(topology), "--topic", app.input, "--to", str(to))
    p = app.migcheck("app", *args, "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    report = json.loads(p.stdout)
    assert report["protocol"] == "streams" and report["group"]["type"] == "streams"
    return p.returncode, report


def _predicted_crash(app: StreamsApp, tmp_path: Path) -> dict:
    rc, report = _verdict(app, tmp_path)
    assert (rc, report["verdict"]) == (1, "CRASH")
    (cand,) = report["candidates"]
    assert f"Existing topic {app.app_id}-counts-changelog" in cand["error"]
    return cand


def _states_after(live: Live, since: float) -> list[str]:
    return [ln for t, _, ln in list(live.lines) if t >= since and ln.startswith("STATE-CHANGE")]


def test_stopped_app_crashes_as_it_starts(kafka: Kafka, tmp_path: Path) -> None:
    app = _app(kafka, "count")
    first = app.run(close="plain")  # close(), as an operator stops an app
    assert first.code == 0 and first.crash is None, first.stderr[-2000:]
    cand = _predicted_crash(app, tmp_path)
    assert "a stopped app as it starts" in cand["error_when"]
    app.alter(app.input, 6)
    app.produce(app.input, phase2())
    second = app.run()
    assert second.crash == TOPOLOGY_EXCEPTION + cand["error"], second.stderr[-2000:]
    # the broker's heartbeat status 2, INCORRECTLY_PARTITIONED_TOPICS, as the client logs it
    assert "(2) " + cand["error"].removeprefix("Invalid topology: ") in second.stderr
    assert "-> RUNNING" not in second.stderr and second.state == []


def test_running_app_crashes_at_its_next_heartbeat(kafka: Kafka, tmp_path: Path) -> None:
    app = _app(kafka, "count")
    with app.live() as live:
        live.wait_for(RUNNING, 60)
        cand = _predicted_crash(app, tmp_path)  # asked while the app runs
        assert "a running one within seconds of the alter" in cand["error_when"]
        start = time.monotonic()
        app.alter(app.input, 6)
        altered = time.monotonic()
        crashed = live.wait_for("CRASH: ", WITHIN_S + 10, since=start)  # while live
        # The handler prints before the client moves to ERROR: closing it in between
        # would race that move (PENDING_SHUTDOWN instead), so wait for the state itself.
        # On the way the thread closes its consumer, whose close() waits up to 30 s (its
        # default) for the group's leave: a loaded CI machine once used all of it.
        live.wait_for("PENDING_ERROR -> ERROR", CLOSE_S + 30, since=crashed)
        run = live.finish()
    assert run.crash == TOPOLOGY_EXCEPTION + cand["error"], run.stderr[-2000:]
    assert crashed - altered < WITHIN_S
    states = _states_after(live, start)  # some runs pass through REBALANCING first
    assert states[-1] == "STATE-CHANGE PENDING_ERROR -> ERROR", states
    assert not any(s.endswith("-> RUNNING") for s in states), states


def test_running_app_without_changelog_runs_on_with_split_state(
    kafka: Kafka, tmp_path: Path
) -> None:
    app = _app(kafka, "count-nolog")
    with app.live() as live:
        live.wait_for(RUNNING, 60)
        rc, report = _verdict(app, tmp_path)
        assert (rc, report["verdict"], report["candidates"][0]["error"]) == (1, "CORRUPT", None)
        start = time.monotonic()
        app.alter(app.input, 6)
        live.wait_for("active=[0_0, 0_1, 0_2, 0_3, 0_4, 0_5]", 30, since=start)
        app.produce(app.input, phase2())
        run = live.finish()
    assert run.crash is None and run.code == 0, run.stderr[-2000:]
    split = {k for k, n in run.values("counts").items() if n > 1}
    assert split == moved_keys(3, 6)
    # every record was counted, a moved key's in two tasks: their counts add up to its own
    totals: Counter[str] = Counter()
    for _, key, value in run.state:
        totals[key] += int(value)
    assert totals == Counter(k for k, _ in phase1() + phase2())


def test_a_replace_thread_handler_stalls_instead(kafka: Kafka, tmp_path: Path) -> None:
    app = _app(kafka, "count")
    with app.live(uncaught="replace-thread") as live:
        live.wait_for(RUNNING, 60)
        cand = _predicted_crash(app, tmp_path)
        assert "REPLACE_THREAD stalls it" in cand["error_when"]
        start = time.monotonic()
        app.alter(app.input, 6)
        live.wait_for("UNCAUGHT ", WITHIN_S + 5, since=start)
        # migcheck, asked now, sees the group stalled and the reason (12: a change to ask).
        # Between a failed thread and its replacement the group may be Empty, or NotReady
        # with no member yet, for a moment: ask again until the replacement has joined.
        for _ in range(6):
            rc, report = _verdict(app, tmp_path, to=12)
            if report["group"]["state"] == "NotReady" and report["group"]["members"] >= 1:
                break
        assert rc == 1 and report["group"]["state"] == "NotReady", report["group"]
        assert report["group"]["members"] >= 1, report["group"]
        assert [h["text"] for h in report["health"]] == [cand["error"]]
        assert live.proc.poll() is None  # alive, and never RUNNING again
        states = _states_after(live, start)
    assert states[0] == "STATE-CHANGE RUNNING -> REBALANCING", states
    assert not any(s.endswith(("-> RUNNING", "ERROR")) for s in states), states
    failures = [ln for t, _, ln in list(live.lines) if t >= start and ln.startswith("UNCAUGHT ")]
    assert len(failures) > 3 and set(failures) == {"UNCAUGHT " + TOPOLOGY_EXCEPTION + cand["error"]}
    assert live.first("CRASH: ") is None
