"""Hostile input: every parser of user text either answers or says what is wrong in one
line (a MigcheckError, exit 2 at the CLI), never a traceback, never a secret.

Hypothesis generates the input: arbitrary text, and mutations of the real
``Topology#describe()`` output committed under fixtures/java/streams/describe.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkatest import REPO

from migcheck.analysis.scan.keysfile import read_keys_file
from migcheck.cli import main
from migcheck.errors import MigcheckError
from migcheck.frameworks.topology import parse_topology
from migcheck.hashing.keys import KEY_ENCODINGS, KEY_TYPES, decode_text, encode_key
from migcheck.kafka.config import ClientConfig, parse_properties

#: fuzzing: slow by design, run whole in CI's integration phase, not the unit lane's minute
pytestmark = pytest.mark.trials

DESCRIBES = sorted((REPO / "fixtures" / "java" / "streams" / "describe").glob("*.txt"))
SECRET = "Hyp0-s3cret-pw"
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

property_lines = st.lists(
    st.one_of(
        st.text(max_size=80),
        st.sampled_from(
            [
                "security.protocol=SASL_PLAINTEXT",
                "security.protocol=SASL_SSL",
                "security.protocol=SSL",
                "security.protocol=KERBEROS",
                "sasl.mechanism=PLAIN",
                "sasl.mechanism=SCRAM-SHA-512",
                "sasl.mechanism=OAUTHBEARER",
                f'sasl.jaas.config=x required username="u" password="{SECRET}";',
                f"sasl.jaas.config=x required password={SECRET}",
                "ssl.truststore.type=JKS",
                "ssl.truststore.location=/nowhere.pem",
                "ssl.keystore.type=PEM",
                "ssl.keystore.location=/nowhere.pem",
                f"ssl.key.password={SECRET}",
                "key\\",
                "  \\",
                "#comment",
                "=",
                ":",
            ]
        ),
    ),
    max_size=12,
)


@FUZZ
@given(property_lines)
def test_command_config_parses_or_fails_in_one_line_without_the_secret(lines: list[str]) -> None:
    text = "\n".join(lines)
    props = parse_properties(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())
    try:
        client = ClientConfig.from_properties("localhost:9092", props)
    except MigcheckError as e:
        assert "\n" not in str(e)
        assert SECRET not in str(e)
        return
    assert SECRET not in repr(client)


def _mutations() -> st.SearchStrategy[str]:
    """A real describe() text with lines dropped, duplicated, cut or garbled."""

    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        lines = draw(st.sampled_from(DESCRIBES)).read_text().splitlines()
        for _ in range(draw(st.integers(1, 4))):
            if not lines:
                break
            i = draw(st.integers(0, len(lines) - 1))
            action = draw(st.sampled_from(["drop", "dup", "cut", "garble", "insert"]))
            if action == "drop":
                del lines[i]
            elif action == "dup":
                lines.insert(i, lines[i])
            elif action == "cut":
                lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            elif action == "garble":
                lines[i] = draw(st.text(string.printable, max_size=60))
            else:
                lines.insert(i, draw(st.text(max_size=60)))
        return "\n".join(lines)

    return mutate()


@FUZZ
@given(st.one_of(st.text(max_size=400), _mutations()))
def test_describe_text_parses_or_names_the_bad_line(text: str) -> None:
    try:
        topology = parse_topology(text)
    except MigcheckError as e:
        assert "\n" not in str(e)
        return
    assert topology.subtopologies


@settings(FUZZ, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=400), _mutations()))
def test_plan_on_a_hostile_topology_answers_or_exits_2_in_one_line(
    text: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole CLI, in process: no Spark and no Kafka are needed offline (capsys is read,
    and so emptied, by every example)."""
    path = tmp_path_factory.mktemp("topology") / "describe.txt"
    path.write_text(text, encoding="utf-8")
    args = ["plan", "--topology", str(path), "--partitions", "orders=6", "--format", "json"]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    err = capsys.readouterr().err
    assert exit_.value.code in (0, 1, 2)
    if exit_.value.code == 2:
        assert err.count("\n") == 1 and err.startswith("migcheck: error: "), err
    assert "Traceback" not in err


@FUZZ
@given(st.text(max_size=60), st.sampled_from(KEY_TYPES), st.sampled_from(KEY_ENCODINGS))
def test_keys_encode_or_fail_in_one_line(text: str, key_type: str, encoding: str) -> None:
    try:
        if key_type == "bytes":
            assert isinstance(decode_text(text, encoding), bytes)
        else:
            assert isinstance(encode_key(text, key_type), bytes)
    except MigcheckError as e:
        assert "\n" not in str(e)


@FUZZ
@given(
    body=st.one_of(
        st.text(max_size=300),
        st.lists(st.tuples(st.text(max_size=20), st.text(max_size=6)), max_size=8).map(
            lambda rows: "key,partition\n" + "\n".join(f"{k},{p}" for k, p in rows)
        ),
    ),
    suffix=st.sampled_from([".csv", ".jsonl", ".parquet", ".txt"]),
    encoding=st.sampled_from(KEY_ENCODINGS),
)
def test_key_files_load_or_fail_in_one_line(
    body: str, suffix: str, encoding: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = Path(tmp_path_factory.mktemp("keys")) / f"keys{suffix}"
    path.write_text(body, encoding="utf-8")
    try:
        table = read_keys_file(str(path), encoding)
    except MigcheckError as e:
        assert "\n" not in str(e)
        return
    assert table.num_rows >= 0
