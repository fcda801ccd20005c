"""The reports where they are read, with the readers' own software: mermaid's parser,
a GitHub-flavoured Markdown renderer, and Chromium.

No Kafka and no Spark: a saved report (``sample_report``, every figure written by hand)
is rendered by ``migcheck render`` as a user would.  The npm oracles (mermaid, marked,
jsdom: ``fixtures/render/``) are installed once per lock file and cached under
``~/.cache/migcheck-test/render``; Chromium is the Debian package ``scripts/test``
installs.  A missing tool is a failure that names it, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kafkatest import REPO
from oracles import run_cli
from pngpixels import Png
from sample_report import candidate, report

ORACLES = REPO / "fixtures" / "render"

#: A sankey mermaid's parser must refuse: proves the parser really parses what it gets.
BROKEN = "\n```mermaid\nsankey-beta\nnot,,a flow\n```\n"


def _cache_root() -> Path:
    default = Path.home() / ".cache" / "migcheck-test" / "render"
    return Path(os.environ.get("MIGCHECK_RENDER_CACHE", default))


def _run(cmd: list[str], cwd: Path, stdin: str | None = None) -> str:
    r = subprocess.run(
        cmd, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300, check=False
    )
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {(r.stderr or r.stdout)[-2000:]}")
    return r.stdout


def _oracles() -> Path:
    """The npm packages of ``fixtures/render``, installed once per lock file (``npm ci``)."""
    lock = (ORACLES / "package-lock.json").read_bytes()
    target = _cache_root() / f"node-{hashlib.sha256(lock).hexdigest()[:12]}"
    if not (target / ".built").exists():
        work = target.with_name(f"{target.name}.tmp{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(ORACLES / name, work / name)
        _run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], work)
        (work / ".built").write_text("")
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
    # the script itself is not part of the key: copied fresh, next to its node_modules
    shutil.copy2(ORACLES / "check.mjs", target / "check.mjs")
    return target


def _saved_report(tmp: Path) -> Path:
    """The sample report plus a 4 -> 40 candidate, whose sankey groups partitions."""
    data = report()
    data["topics"][0]["candidates"].append(candidate(40, [[1] * 40 for _ in range(4)]))
    data["candidates"].append(40)
    saved = tmp / "report.json"
    saved.write_text(json.dumps(data), encoding="utf-8")
    return saved


def _render(saved: Path, fmt: str, out: Path) -> Path:
    r = run_cli("render", str(saved), "--format", fmt, "--output", str(out))
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def markdown_seen(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The Markdown report, and what one node run made of it (GFM HTML, parsed diagrams)."""
    tmp = tmp_path_factory.mktemp("render-md")
    md = _render(_saved_report(tmp), "markdown", tmp / "report.md").read_text(encoding="utf-8")
    assert shutil.which("node") and shutil.which("npm"), "node and npm are needed (nodejs)"
    oracles = _oracles()
    seen = json.loads(_run(["node", str(oracles / "check.mjs")], oracles, stdin=md + BROKEN))
    return md, seen


def test_every_mermaid_block_parses_with_mermaids_own_parser(
    markdown_seen: tuple[str, dict[str, Any]],
) -> None:
    md, seen = markdown_seen
    *ours, broken = seen["diagrams"]
    assert len(ours) == md.count("```mermaid\n") == 5  # orders 6, 8, 40 and clicks 6, 8
    assert [(d["type"], d["error"]) for d in ours] == [("sankey", None)] * 5
    assert broken["type"] is None and "Parse error" in broken["error"]
    grouped = ours[2]["text"]  # 4 -> 40: new partitions in ranges of 3
    assert '"p0 (now)","p0-p2 (new)",3' in grouped and '"p3 (now)","p39 (new)",1' in grouped


def test_gfm_keeps_the_mermaid_blocks_and_no_svg(
    markdown_seen: tuple[str, dict[str, Any]],
) -> None:
    md, seen = markdown_seen
    html = seen["html"]
    assert html.count('<pre><code class="language-mermaid">sankey-beta') == 5 + 1  # + BROKEN
    assert "<svg" not in md and "<svg" not in html
    # a key stays text: one code element in its cell, the pipe kept inside it
    assert "<td><code>a|b&lt;script&gt;alert(1)&lt;/script&gt;</code></td>" in html


def _blend(count: int, peak: int) -> tuple[int, int, int]:
    """The heatmap's scale, by hand: white to ColorBrewer's darkest Blues (8, 48, 107),
    from a 12% tint for any key up to 100% at the largest cell."""
    shade = 0.12 + 0.88 * count / peak
    return tuple(round(255 - shade * (255 - d)) for d in (8, 48, 107))  # type: ignore[return-value]


def _near(seen: tuple[int, int, int], expected: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 3 for a, b in zip(seen, expected, strict=True))


def test_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "chromium is needed (apt-get install chromium; scripts/test installs it)"
    page = _render(_saved_report(tmp_path), "html", tmp_path / "report.html")
    # Pin the first heatmap (orders 4 -> 6) beside the report at a known offset; the page
    # itself is unchanged.  Its grid starts 60 px right of and 44 px below the SVG's
    # corner, 48 px cells (a 4 x 6 matrix: its cells at their largest, read at the page's
    # text size).
    pinned = tmp_path / "pinned.html"
    pin = "<style>#heatmap-1{position:fixed;top:0;left:1200px;background:#fff}</style>"
    pinned.write_text(page.read_text(encoding="utf-8").replace("</body>", pin + "</body>"))
    shot = tmp_path / "report.png"
    _run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1600,1000",
            f"--screenshot={shot}",
            pinned.as_uri(),
        ],
        tmp_path,
    )
    png = Png(shot)
    assert (png.width, png.height) == (1600, 1000)

    def cell(i: int, j: int, dx: int = 5, dy: int = 5) -> tuple[int, int, int]:
        return png.rgb(1200 + 60 + 48 * j + dx, 44 + 48 * i + dy)

    # orders 4 -> 6 (sample_report.M4_6): the largest cell is 37, at row 3, column 5
    assert _near(cell(3, 5), (8, 48, 107)), cell(3, 5)
    assert _near(cell(0, 2), _blend(33, 37)), cell(0, 2)
    assert _near(cell(3, 1), _blend(30, 37)), cell(3, 1)
    assert _near(cell(0, 1), (255, 255, 255)), cell(0, 1)  # no key
    assert _near(cell(1, 1, dx=0, dy=24), (0xD6, 0x27, 0x28))  # stays: outlined in red
    # and the report around it was drawn: its title's dark text in the top-left corner
    dark = sum(sum(png.rgb(x, y)) < 200 for x in range(32, 600) for y in range(20, 60))
    assert dark > 200, f"no title drawn; screenshot: {shot}"
