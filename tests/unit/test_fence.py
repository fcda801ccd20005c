"""The one fence around other libraries' private APIs (migcheck/fence.py): what it admits,
when it closes, and that it says so once per process however many threads ask."""

from __future__ import annotations

import threading

import pytest
from packaging.specifiers import SpecifierSet

from migcheck.fence import VersionFence, in_range

RANGE = SpecifierSet(">=1.4,<1.5")


def _fence(version: str, off_switch: str | None = None) -> VersionFence:
    return VersionFence("somelib", "somelib", RANGE, "the slow path", off_switch=off_switch,
                        given_version=version)  # fmt: skip


@pytest.mark.parametrize(
    ("version", "inside"),
    [("1.3.9", False), ("1.4.0rc1", False), ("1.4", True), ("1.4.7", True),
     ("1.4.8rc2", True), ("1.4.99.dev1", True), ("1.5.0rc1", False), ("1.5.0", False),
     ("1.4-custom build", False), ("", False)],
)  # fmt: skip
def test_the_range_is_the_pins_pre_releases_included(version: str, inside: bool) -> None:
    assert in_range(RANGE, version) is inside


def test_outside_the_range_it_refuses_every_use_and_says_so_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fence = _fence("1.5.0")
    assert [fence.open() for _ in range(3)] == [False, False, False]
    assert capsys.readouterr().err == (
        "migcheck: somelib 1.5.0 is outside migcheck's tested range <1.5,>=1.4: the slow path\n"
    )


def test_inside_the_range_a_failed_load_closes_it_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fence = _fence("1.4.2")
    assert fence.open() and capsys.readouterr().err == ""
    fence.close("ImportError: cannot import name '_Private'")
    assert [fence.open(), fence.open()] == [False, False]
    assert capsys.readouterr().err == (
        "migcheck: somelib 1.4.2 lacks the private API migcheck uses (ImportError: cannot "
        "import name '_Private'): the slow path\n"
    )


def test_the_off_switch_refuses_silently(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fence = _fence("1.4.2", off_switch="SOMELIB_HOOKS")
    monkeypatch.setenv("SOMELIB_HOOKS", "off")
    assert not fence.open()
    monkeypatch.setenv("SOMELIB_HOOKS", "on")
    assert fence.open()
    assert capsys.readouterr().err == ""


def test_many_threads_asking_at_once_get_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    fence = _fence("2.0")
    start = threading.Barrier(16)

    def ask() -> None:
        start.wait()
        fence.open()

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert capsys.readouterr().err.count("\n") == 1


def test_the_version_is_read_from_the_library_at_first_use_not_at_import() -> None:
    fence = VersionFence("packaging", "packaging", SpecifierSet(">=0"), "none")
    assert fence.given_version is None  # nothing imported yet
    import packaging

    assert fence.version == packaging.__version__
