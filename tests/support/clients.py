"""The real clients' producers, built from the package registries: the oracles of the
client partitioners (``fixtures/clients/``).

Each program is built once per version of its sources and cached between runs under
``~/.cache/migcheck-test/clients`` (``MIGCHECK_CLIENTS_CACHE`` moves it): KafkaJS from
npm (``npm ci`` against the lock file), Sarama, franz-go and kafka-go from Go modules
(``go.sum``), the kafka crate from crates.io (``Cargo.lock``).  A build that fails is a
test failure naming the tool, never a skip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatest import REPO

CLIENTS = REPO / "fixtures" / "clients"


def _cache_root() -> Path:
    default = Path.home() / ".cache" / "migcheck-test" / "clients"
    return Path(os.environ.get("MIGCHECK_CLIENTS_CACHE", default))


def _digest(source: Path, names: Sequence[str]) -> str:
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0" + (source / name).read_bytes())
    return h.hexdigest()[:12]


def _run(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    r = subprocess.run(
        list(cmd),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip()[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}: {tail}")


def _build(name: str, files: Sequence[str], build: object) -> Path:
    """The cache directory of ``name``'s build for its current sources, built if missing."""
    source = CLIENTS / name
    target = _cache_root() / f"{name}-{_digest(source, files)}"
    if (target / ".built").exists():
        return target
    work = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in files:
        (work / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / f, work / f)
    build(work)  # type: ignore[operator]
    (work / ".built").write_text("")
    shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    return target


@dataclass(frozen=True)
class Clients:
    """How to run each built client program."""

    kafkajs: list[str]  # + partitions N | produce BOOTSTRAP TOPIC
    go: list[str]  # + partitions NAME N | produce NAME BOOTSTRAP TOPIC
    rust: list[str]  # + partitions N


def build_kafkajs() -> list[str]:
    files = ["package.json", "package-lock.json", "client.js"]
    out = _build(
        "kafkajs",
        files,
        lambda d: _run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], d),
    )
    return ["node", str(out / "client.js")]


def build_go() -> list[str]:
    files = ["go.mod", "go.sum", "main.go"]
    out = _build(
        "go",
        files,
        lambda d: _run(["go", "build", "-mod=readonly", "-o", "goclients", "."], d),
    )
    return [str(out / "goclients")]


def build_rust() -> list[str]:
    files = ["Cargo.toml", "Cargo.lock", "src/main.rs"]

    def cargo(d: Path) -> None:
        _run(["cargo", "build", "--release", "--locked", "-q"], d)
        binary = d / "target" / "release" / "kafka-rust-client"
        shutil.copy2(binary, d / "kafka-rust-client")
        shutil.rmtree(d / "target")  # the build's intermediates: only the binary is kept

    out = _build("rust", files, cargo)
    return [str(out / "kafka-rust-client")]


def build_all() -> Clients:
    """Every client program (the three builds run at once: each mostly waits on its
    registry or its compiler)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        js, go, rust = (pool.submit(f) for f in (build_kafkajs, build_go, build_rust))
        return Clients(js.result(), go.result(), rust.result())


def key_lines(keys: Sequence[bytes | None]) -> str:
    """Keys as the client programs read them: hex, ``-`` empty, ``~`` null."""
    return "".join(("~" if k is None else k.hex() or "-") + "\n" for k in keys)


def client_partitions(cmd: Sequence[str], keys: Sequence[bytes | None]) -> list[int | None]:
    """The partition the client program chose for each key (None: not hashed)."""
    r = subprocess.run(
        list(cmd), input=key_lines(keys), capture_output=True, text=True, timeout=300, check=False
    )
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()[-2000:]}")
    return [None if x == "~" else int(x) for x in r.stdout.split()]


def client_produce(cmd: Sequence[str], keys: Sequence[bytes | None]) -> None:
    """Write one record per key with the client's own producer and partitioner."""
    r = subprocess.run(
        list(cmd), input=key_lines(keys), capture_output=True, text=True, timeout=300, check=False
    )
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()[-2000:]}")
