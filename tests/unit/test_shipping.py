"""What migcheck ships to a cluster's executors, where it keeps it, and how Spark is told.

The closure is computed from this interpreter's real installed metadata, so the
expectations are the packages a PySpark cluster has (pyspark[sql] and its
requirements) against the ones only migcheck needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from importlib import metadata
from pathlib import Path

import pytest

from migcheck.analysis import shipping
from migcheck.errors import MigcheckError

PACKAGE = Path(shipping.__file__).parent.parent

#: pyspark[sql] and what it needs (six too with an older python-dateutil): a PySpark
#: cluster has them.
ON_THE_CLUSTER = {
    "pyspark",
    "py4j",
    "pandas",
    "pyarrow",
    "numpy",
    "python-dateutil",
    "pytz",
    "tzdata",
}


@pytest.fixture(scope="module")
def shipped() -> dict[str, str]:
    return shipping.shipped_distributions()


@pytest.fixture(scope="module")
def member_names(shipped: dict[str, str]) -> list[str]:
    return [name for _, name in shipping.archive_members(PACKAGE, shipped.values())]


@pytest.mark.parametrize(
    ("master", "local"),
    [
        ("local", True),
        ("local[4]", True),
        ("local[*]", True),
        ("local[2,3]", True),
        ("spark://10.0.0.1:7077", False),
        ("yarn", False),
        ("k8s://https://kube:6443", False),
        ("local-cluster[2,1,1024]", False),
    ],
)
def test_only_local_masters_run_the_drivers_interpreter(master: str, local: bool) -> None:
    assert shipping.is_local(master) is local


def test_the_closure_holds_what_only_migcheck_needs(shipped: dict[str, str]) -> None:
    # kafka-python[crc32c,lz4,snappy,zstd]: its extras, and python-snappy's cramjam
    needed = {"numba", "llvmlite", "kafka-python", "mmh3", "crc32c", "lz4", "python-snappy"}
    needed |= {"confluent-kafka"}  # the copy's producer
    assert needed | {"zstandard", "cramjam", "click", "rich"} <= set(shipped)


def test_the_closure_leaves_out_what_a_pyspark_cluster_has(shipped: dict[str, str]) -> None:
    assert not set(shipped) & ON_THE_CLUSTER
    assert "pytest" not in shipped  # migcheck[test] is not a runtime requirement


def test_pysparks_own_closure_is_what_the_cluster_has() -> None:
    pyspark = [r for r in shipping.requirements_of("migcheck") if r.name == "pyspark"]
    has = set(shipping.closure(pyspark))
    assert has >= ON_THE_CLUSTER
    assert not has & {"numba", "llvmlite", "kafka-python", "mmh3"}


def test_extras_bring_only_their_own_requirements() -> None:
    names = {r.name for r in shipping.requirements_of("kafka-python", ["lz4"])}
    assert "lz4" in names
    assert not names & {"crc32c", "zstandard", "pytest"}


def test_the_archive_holds_migcheck_and_the_compiled_dependencies(member_names: list[str]) -> None:
    names = set(member_names)
    assert {
        "migcheck/__init__.py",
        "migcheck/analysis/shipping.py",
        "migcheck/analysis/log4j2-spark.properties",
        "numba/__init__.py",
        "kafka/__init__.py",
        "llvmlite/binding/libllvmlite.so",
    } <= names
    assert any(n.startswith("mmh3") and n.endswith(".so") for n in names)
    # librdkafka, vendored by the wheel beside its extension: the copy's producer needs both
    assert any(n.startswith("confluent_kafka/cimpl") and n.endswith(".so") for n in names)
    assert any(n.startswith("confluent_kafka.libs/librdkafka") for n in names)


def test_the_archive_holds_nothing_the_cluster_has_nor_bytecode(member_names: list[str]) -> None:
    tops = {name.split("/")[0] for name in member_names}
    assert not tops & {"pyspark", "pandas", "pyarrow", "numpy", "py4j", "dateutil", "pytz"}
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in member_names)
    assert not any(n.startswith("..") or n.startswith("/") for n in member_names)


def test_the_archive_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "deps.tar.gz"
    shipping.build_archive(target, PACKAGE, ["mmh3", "kafka-python"])
    with tarfile.open(target) as tar:
        names = set(tar.getnames())
    assert {"migcheck/analysis/spark.py", "kafka/__init__.py"} <= names
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left beside it


def test_the_probe_names_the_archive_it_imports_migcheck_from(tmp_path: Path) -> None:
    """Unpacked as an executor does, the archive's migcheck is the one a probe finds, and
    the probe reads the key it was built with; an installed migcheck has none."""
    target = tmp_path / "deps.tar.gz"
    shipping.build_archive(target, PACKAGE, ["mmh3"], "k123")
    unpacked = tmp_path / "migcheck-deps"
    with tarfile.open(target) as tar:
        tar.extractall(unpacked, filter="data")
    assert _probed(unpacked, tmp_path) == {
        "version": metadata.version("migcheck"),
        "archive": "k123",
    }
    assert _probed(PACKAGE.parent, tmp_path)["archive"] is None  # a checkout: no archive


def _probed(path: Path, cwd: Path) -> dict[str, str | None]:
    """What a probe run by a Python whose ``PYTHONPATH`` is ``path`` says of migcheck."""
    report = "import json; from migcheck.analysis import probe; print(json.dumps(probe.probe([])))"
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run([sys.executable, "-c", report], env=env, cwd=cwd, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    found: dict[str, str | None] = json.loads(out)["migcheck"]
    return found


def test_the_cache_key_follows_migchecks_sources(tmp_path: Path) -> None:
    copy = tmp_path / "migcheck"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = shipping.source_digest(copy)
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.pyc").write_bytes(b"bytecode")
    assert shipping.source_digest(copy) == before  # bytecode is not a source
    (copy / "words.py").write_text((copy / "words.py").read_text() + "\n# edited\n")
    after = shipping.source_digest(copy)
    assert after != before
    dists = {"mmh3": "mmh3"}
    assert shipping.cache_key(dists, before) != shipping.cache_key(dists, after)
    assert shipping.cache_key(dists, before) == shipping.cache_key(dists, before)


def test_the_archive_is_built_once_and_stale_ones_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    built: list[Path] = []

    def build(target: Path, package_dir: Path, distributions: object, key: str) -> None:
        built.append(target)
        target.write_bytes(b"archive")

    monkeypatch.setattr(shipping, "build_archive", build)
    stale = tmp_path / "executors" / "migcheck-deps-0000000000000000.tar.gz"
    stale.parent.mkdir()
    stale.write_bytes(b"an older migcheck, unused for two days")
    two_days_ago = time.time() - 2 * 86400
    os.utime(stale, (two_days_ago, two_days_ago))
    recent = stale.with_name("migcheck-deps-1111111111111111.tar.gz")
    recent.write_bytes(b"another migcheck's, maybe still served by a run")

    first = shipping.ensure_archive()
    assert "packing migcheck and its dependencies" in capsys.readouterr().err
    assert shipping.ensure_archive() == first
    assert capsys.readouterr().err == ""
    assert built == [first]
    assert first.parent == tmp_path / "executors"
    assert not stale.exists()
    assert recent.exists()


def test_the_settings_add_the_archive_and_keep_the_users() -> None:
    archive = Path("/home/op/.cache/migcheck/executors/migcheck-deps-ab.tar.gz")
    ours = "file:///home/op/.cache/migcheck/executors/migcheck-deps-ab.tar.gz#migcheck-deps"
    assert shipping.executor_settings({}, archive) == {
        "spark.archives": ours,
        "spark.executorEnv.PYTHONPATH": "./migcheck-deps",
    }
    user = {
        "spark.archives": "hdfs:///envs/tools.tgz#tools, s3a://b/x.zip",
        "spark.executorEnv.PYTHONPATH": "./tools:/opt/lib",
    }
    assert shipping.executor_settings(user, archive) == {
        "spark.archives": f"hdfs:///envs/tools.tgz#tools,s3a://b/x.zip,{ours}",
        "spark.executorEnv.PYTHONPATH": "./migcheck-deps:./tools:/opt/lib",
    }
    # A Spark Connect server's workers run a directory below the executor's (a session's)
    on_server = shipping.executor_settings({}, archive, sessions=True)
    assert on_server["spark.executorEnv.PYTHONPATH"] == "./migcheck-deps:../migcheck-deps"


def test_a_path_with_spaces_stays_one_uri() -> None:
    settings = shipping.executor_settings({}, Path("/home/o p/deps.tar.gz"))
    assert settings["spark.archives"] == "file:///home/o%20p/deps.tar.gz#migcheck-deps"


def test_an_unwritable_cache_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "executors").write_text("a file where the folder goes")
    monkeypatch.setenv("MIGCHECK_CACHE_DIR", str(tmp_path))
    with pytest.raises(MigcheckError, match="set MIGCHECK_CACHE_DIR to a writable directory"):
        shipping.ensure_archive()


def test_only_local_workers_are_given_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    from migcheck.analysis.spark import _choose_worker_python

    monkeypatch.setenv("PYSPARK_PYTHON", "restored after the test")
    monkeypatch.delenv("PYSPARK_PYTHON")
    _choose_worker_python({}, local_workers=False)  # a cluster: python3 on the workers
    assert "PYSPARK_PYTHON" not in os.environ
    _choose_worker_python({}, local_workers=True)
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_the_users_worker_python_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from migcheck.analysis.spark import _choose_worker_python

    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py311/bin/python")
    _choose_worker_python({}, local_workers=True)
    assert os.environ["PYSPARK_PYTHON"] == "/opt/py311/bin/python"
    _choose_worker_python({"spark.pyspark.python": "/srv/py/bin/python3"}, local_workers=False)
    assert os.environ["PYSPARK_PYTHON"] == "/srv/py/bin/python3"  # the setting wins, as in Spark


@pytest.mark.parametrize(
    ("master", "conf", "submitted", "local"),
    [
        (None, {}, False, True),  # the embedded default, local[*]
        ("local[2]", {}, False, True),
        ("spark://10.0.0.1:7077", {}, False, False),
        (None, {"spark.master": "local[1]"}, False, True),
        (None, {"spark.master": "yarn"}, False, False),
        (None, {}, True, False),  # inside spark-submit: its master, unknown here
    ],
)
def test_the_embedded_local_session_is_known_before_spark_starts(
    monkeypatch: pytest.MonkeyPatch,
    master: str | None,
    conf: dict[str, str],
    submitted: bool,
    local: bool,
) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    if submitted:
        monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "41234")
    assert shipping.embedded_local(master, conf) is local
