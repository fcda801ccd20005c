"""The class-archive cache under ~/.cache/migcheck stays within its bound.

Each virtualenv's pyspark is another class path, so another archive of about 150 MB;
nothing removed them, and the cache grew by one per virtualenv.  The decision is a pure
function over (name, last use, size, usable) entries, tested here with hand-made
entries; the I/O edge is tested on a temporary cache with fake archives (no JVM).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from migcheck.analysis import jvmarchive
from migcheck.analysis.jvmarchive import Entry, to_remove

NOW = 1_000_000_000.0
HOUR = 3600.0
MB = 10**6


def entry(name: str, hours_ago: float, size_mb: int = 150, usable: bool = True) -> Entry:
    return Entry(name, NOW - hours_ago * HOUR, size_mb * MB, usable)


def test_the_bound_is_what_the_readme_states() -> None:
    # README and the module docstring: at most 3 archives and 600 MB; an hour in use.
    assert (jvmarchive.MAX_ARCHIVES, jvmarchive.MAX_BYTES, jvmarchive.IN_USE_S) == (
        3,
        600_000_000,
        3600.0,
    )


def test_a_small_cache_of_usable_archives_is_kept() -> None:
    assert to_remove([entry("a", 5), entry("b", 50)], NOW) == []


def test_an_archive_nothing_installed_can_map_is_removed() -> None:
    assert to_remove([entry("gone-venv", 5, usable=False), entry("live", 2)], NOW) == ["gone-venv"]


def test_past_three_the_least_recently_used_go() -> None:
    entries = [entry("d", 40), entry("a", 2), entry("c", 30), entry("b", 10), entry("e", 90)]
    assert sorted(to_remove(entries, NOW)) == ["d", "e"]


def test_past_600_mb_the_least_recently_used_go() -> None:
    # 250 + 250 = 500 MB kept; a third of 250 would make 750 MB.
    entries = [entry("new", 2, 250), entry("mid", 5, 250), entry("old", 9, 250)]
    assert to_remove(entries, NOW) == ["old"]


def test_an_archive_used_within_the_hour_is_never_removed() -> None:
    # Unusable by its sources, and the fifth of five: a run may be starting a JVM on it.
    entries = [entry(n, 0.1 * i) for i, n in enumerate("abcd")]
    entries.append(entry("starting", 0.5, usable=False))
    assert to_remove(entries, NOW) == []


def test_an_unusable_archive_goes_at_once_when_idle() -> None:
    assert to_remove([entry("x", 1.01, usable=False)], NOW) == ["x"]


# --- the I/O edge: fake archives in a temporary cache -----------------------------------


def fake_archive(root: Path, name: str, hours_ago: float, sources: str | None) -> Path:
    path = root / "spark-4.2.0" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * 10)
    if sources is not None:
        path.with_name(name + ".src").write_text(sources)
    stamp = time.time() - hours_ago * HOUR
    os.utime(path, (stamp, stamp))
    return path


def test_prune_removes_an_archive_whose_virtualenv_is_gone(tmp_path: Path) -> None:
    gone = fake_archive(
        tmp_path, "classes-0123456789abcdef.jsa", 3, "/no/such/java\n4.2.0\n/no/such/jars\n"
    )
    legacy = fake_archive(tmp_path, "classes-fedcba9876543210.jsa", 3, None)  # no .src: kept
    removed = jvmarchive.prune(tmp_path)
    assert removed == [gone]
    assert not gone.exists() and not gone.with_name(gone.name + ".src").exists()
    assert legacy.exists()


def test_prune_keeps_the_archive_of_the_installed_java_and_pyspark(tmp_path: Path) -> None:
    archive = jvmarchive.archive_path(tmp_path)
    if archive is None:
        pytest.skip("no java binary here")
    import pyspark

    from migcheck.analysis.jvmarchive import _java

    jars = Path(pyspark.__file__).parent / "jars"
    src = f"{_java()}\n{pyspark.__version__}\n{jars}\n"
    live = fake_archive(tmp_path, archive.name, 5, src)
    assert jvmarchive.prune(tmp_path) == []
    assert live.exists()
