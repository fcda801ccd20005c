"""The committed ``Topology#describe()`` texts are what a real Kafka Streams app prints.

The unit tests (tests/unit/test_topology.py and the rules' tests) parse these
texts without a JVM; this test is what lets them stand in for the real app.
"""

from __future__ import annotations

from kafkatest import REPO, STREAMS_SRC, compile_fixture, run, state_dir

DESCRIBE = REPO / "fixtures" / "java" / "streams" / "describe"


def test_fixtures_are_what_kafka_streams_prints() -> None:
    """Each committed text is exactly what the real Kafka Streams app's describe() prints."""
    state = state_dir()
    cp = compile_fixture(state, STREAMS_SRC)
    for f in sorted(DESCRIBE.glob("*.txt")):
        cmd = ["java", "-cp", cp, "StreamsFixture", "describe", "--topology", f.stem]
        rc, out, err = run([*cmd, "--input", "orders", "--table", "customers"])
        assert rc == 0, err
        assert out == f.read_text(encoding="utf-8"), f.name
