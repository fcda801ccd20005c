"""The helpers of the move-state tests on a real Kafka Streams count app
(tests/integration/test_runbook_move_state.py and test_runbook_move_copies.py, one file
split in two so that neither holds one xdist worker for ten minutes): the app's counts
read from its dump, its topics' partition counts, a history counted and then trimmed, and
the move-state script written for it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kafkatest import Kafka, read_as_group
from streamsapp import StreamsApp
from trimming import offsets, trim


def counts(state: list[tuple[str, str, str]]) -> dict[str, int]:
    """The counts store of the app's dump (its (store, key, value) rows)."""
    return {key: int(count) for store, key, count in state if store == "counts"}


def dumped(out: str) -> list[tuple[str, str, str]]:
    """The rows of the app's ``STATE<TAB>store<TAB>key<TAB>value`` lines."""
    rows = [line.split("\t")[1:4] for line in out.splitlines() if line.startswith("STATE\t")]
    return [(store, key, value) for store, key, value in rows]


def partitions(kafka: Kafka, topic: str) -> str:
    """The topic's partition count, as Kafka's kafka-topics describes it."""
    return str(kafka.partition_count(topic))


def counted_and_trimmed(
    app: StreamsApp,
    history: list[tuple[str, str]],
    counted: Counter[str],
    tmp_path: Path,
    also: tuple[str, ...] = (),
    readers: tuple[StreamsApp, ...] = (),
    groups: tuple[str, ...] = (),
) -> dict[int, int]:
    """The app counts ``history`` (its counts store then holds ``counted``), and so do
    ``readers``, count apps of the same input (each key's records), and plain ``groups``
    read it all and commit, their consumers then stopped; then retention deletes every
    record they read, of its input and of ``also``: each one's ends, now its log start
    too.  The input's ends."""
    app.produce(app.input, history)
    first = app.run()
    assert first.code == 0, first.stderr[-2000:]
    assert counts(first.state) == counted
    for reader in readers:
        run = reader.run()
        assert run.code == 0, run.stderr[-2000:]
        assert counts(run.state) == Counter(key for key, _ in history)
    for group in groups:
        read_as_group(app.kafka, app.input, group, len(history)).close()
    for topic in (app.input, *also):
        ends = offsets(app.kafka, topic, "-1")
        trim(app.kafka, topic, ends, tmp_path / f"delete-{topic}.json")
        assert offsets(app.kafka, topic, "-2") == ends
    return offsets(app.kafka, app.input, "-1")


def auto_script(
    app: StreamsApp,
    tmp_path: Path,
    here: pytest.CaptureFixture[str],
    also: tuple[str, ...] = (),
    readers: tuple[StreamsApp, ...] = (),
    extra: tuple[str, ...] = (),
) -> Path:
    """``runbook --strategy auto`` of the input (and the set's other topics, ``also``) with
    the app's real topology (and ``readers``, other apps of the runbook, each with its
    own), as a script: it must choose move-state.  Run in this process (``here``: capsys),
    on the test session's Spark (the caller's ``spark`` fixture), which detects the
    changelogs' partitioner: no Spark start of its own."""
    files = {a.app_id: a.describe(tmp_path / f"{a.app_id}.txt") for a in (app, *readers)}
    topologies = (
        ["--topology", str(files[app.app_id])]
        if not readers
        else [a for i, f in files.items() for a in ("--topology", f"{i}={f}")]
    )
    others = [a for r in readers for a in ("--application-id", r.app_id)]
    topics = [a for t in (app.input, *also) for a in ("--topic", t)]
    p = app.migcheck(
        "runbook", *others, *topics, "--to", "6", *topologies,
        "--state-dir", str(app.state_dir), "--format", "sh", *extra, here=here,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "# --strategy auto chose move-state: the sources no longer hold their whole" in (
        p.stdout
    )
    script = tmp_path / "runbook.sh"
    script.write_text(p.stdout, encoding="utf-8")
    return script


def exact(counted: dict[str, int], whole: Counter[str]) -> None:
    """Every key's count is its whole history, and no other key is counted."""
    wrong = {k: (counted.get(k), n) for k, n in whole.items() if counted.get(k) != n}
    assert not wrong, f"{len(wrong)} keys lost history: {list(wrong.items())[:5]}"
    assert counted.keys() == whole.keys()
