"""The HTML reports read at a glance (issue 43), seen in headless Chromium at 640 and 1,400 px.

Each report's verdict is a coloured badge at the top, inside the first screen; nothing
is wider than a 640 px window (its tables and heatmaps scroll inside their own box); and
a long topic name does not push the page sideways.  The reports are written by hand
(``sample_report``) or offline (``plan --topology``), rendered by ``migcheck`` as a user
would; the browser measures the page, and the screenshots are kept under the test's
temporary directory for a person to look at.  No Kafka and no Spark.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kafkatest import REPO
from oracles import run_cli
from pngpixels import Png
from sample_report import app_report, readers_report, report

#: A topic name as long as real ones get: no space, only dots and hyphens to break at.
LONG_TOPIC = "com.example.shop.orders-enriched-with-customer-region-and-currency-v2"

#: The badge colours, written out here by hand (not read from migcheck.report.badge):
#: the verdict each report ends on, and the colour a person sees it on.
CRASH_RED = (0xCF, 0x22, 0x2E)
ORDER_AMBER = (0x9A, 0x67, 0x00)
UNPREDICTABLE_GREY = (0x57, 0x60, 0x6A)
DATA_LOSS_RED = (0x82, 0x07, 0x1E)

WIDTHS = (640, 1400)
HEIGHT = 900

#: Appended to the page: writes what the browser measured into the DOM --dump-dom prints.
MEASURE = """<script>
const badge = document.querySelector('.badge');
const r = badge ? badge.getBoundingClientRect() : null;
document.body.setAttribute('data-measured', JSON.stringify({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  badge: badge ? badge.textContent : null,
  badgeTop: r ? r.top : null, badgeBottom: r ? r.bottom : null,
}));
</script>"""


def _browser() -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "chromium is needed (apt-get install chromium; scripts/test installs it)"
    return browser


def _chromium(page: Path, width: int, tmp: Path, *mode: str) -> str:
    r = subprocess.run(
        [
            _browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={tmp / 'profile'}",
            f"--window-size={width},{HEIGHT}",
            *mode,
            page.as_uri(),
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def _measure(page: Path, width: int, tmp: Path) -> dict[str, Any]:
    probe = tmp / f"{page.stem}-measure-{width}.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"))
    dom = _chromium(probe, width, tmp, "--dump-dom", "--virtual-time-budget=2000")
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def _saved(tmp: Path, name: str, data: dict[str, Any]) -> Path:
    saved = tmp / f"{name}.json"
    saved.write_text(json.dumps(data), encoding="utf-8")
    return saved


def _analyze(tmp: Path) -> Path:
    data = report()
    data["topics"][0]["topic"] = LONG_TOPIC
    return _saved(tmp, "analyze", data)


def _app(tmp: Path) -> Path:
    data = app_report()
    data["changes"] = [LONG_TOPIC]
    data["topics"][0]["topic"] = LONG_TOPIC
    return _saved(tmp, "app", data)


def _readers(tmp: Path) -> Path:
    data = readers_report()
    data["topics"][0]["topic"] = LONG_TOPIC
    return _saved(tmp, "readers", data)


def _gate(tmp: Path) -> Path:
    """A gate report as ``migcheck gate`` writes one: a Terraform replace of a long-named
    topic, which deletes it (DATA_LOSS)."""
    change = {
        "topic": LONG_TOPIC, "from": 3, "to": 12,
        "source": {"kind": "terraform", "file": "plan.json", "address": "kafka_topic.orders"},
        "verdict": "DATA_LOSS", "blocking": True,
        "rules": [{"code": "MC101", "verdict": "DATA_LOSS",
                   "text": "Terraform replaces the topic: it deletes it and its records",
                   "doc": "docs/rules.md#mc101"}],
        "accepted": False, "acceptance": None,
        "moved": {"keys": 10, "fraction": 0.25, "records": 30, "bytes": 300, "exact": False},
        "readers": [], "next": [],
    }  # fmt: skip
    return _saved(tmp, "gate", {
        "report": "gate", "migcheck_version": "0", "generated_at": "2026-11-28T00:00:00Z",
        "bootstrap_servers": "b:9092", "verdict": "DATA_LOSS", "passed": False,
        "changes": [change], "notes": [],
    })  # fmt: skip


def _html(tmp: Path, kind: str) -> Path:
    out = tmp / f"{kind}.html"
    if kind == "plan":
        describe = REPO / "fixtures" / "java" / "streams" / "describe" / "rekey-count.txt"
        args = ["plan", "--topology", str(describe), "--partitions", "orders=6"]
        r = run_cli(*args, "--to", "orders=12", "--format", "html", "--output", str(out))
        assert r.returncode == 1, r.stderr  # the change would crash the app
        return out
    saved = {"analyze": _analyze, "app": _app, "readers": _readers, "gate": _gate}[kind](tmp)
    r = run_cli("render", str(saved), "--format", "html", "--output", str(out))
    assert r.returncode == 0, r.stderr
    return out


def _near(seen: tuple[int, int, int], expected: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 6 for a, b in zip(seen, expected, strict=True))


#: The report, the verdict on its badge, and that badge's colour.
CASES = [
    # orders moves keys, clicks no partitioner placed: the worst of the two is shown
    ("analyze", "UNPREDICTABLE", UNPREDICTABLE_GREY),
    ("app", "CRASH", CRASH_RED),
    ("readers", "ORDER", ORDER_AMBER),
    ("plan", "CRASH", CRASH_RED),
    ("gate", "DATA_LOSS", DATA_LOSS_RED),
]


@pytest.mark.parametrize(("kind", "verdict", "colour"), CASES, ids=[c[0] for c in CASES])
def test_the_verdict_is_a_badge_on_the_first_screen_and_nothing_overflows(
    tmp_path: Path, kind: str, verdict: str, colour: tuple[int, int, int]
) -> None:
    page = _html(tmp_path, kind)
    for width in WIDTHS:
        seen = _measure(page, width, tmp_path)
        assert seen["innerWidth"] == width, seen
        assert seen["badge"] == verdict, seen
        assert seen["badgeTop"] >= 0 and seen["badgeBottom"] <= 120, seen  # at the very top
        # nothing wider than the window: tables and heatmaps scroll inside their box
        assert seen["scrollWidth"] <= width, seen
        shot = tmp_path / f"{kind}-{width}.png"
        _chromium(page, width, tmp_path, f"--screenshot={shot}")
        png = Png(shot)
        assert (png.width, png.height) == (width, HEIGHT)
        # the badge as a person sees it: a block of its colour in the top 120 px
        coloured = sum(
            _near(png.rgb(x, y), colour) for x in range(0, min(width, 400), 2) for y in range(120)
        )
        assert coloured > 400, f"no {verdict} badge at the top; screenshot: {shot}"
