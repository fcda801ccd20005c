"""The verdict badge of the HTML reports: one colour per verdict word, worst shown first."""

from __future__ import annotations

import pytest

from migcheck.apps.rules import AppLevel
from migcheck.model.analyze import Level
from migcheck.model.gate import GateVerdict
from migcheck.model.readers import ReaderRisk
from migcheck.report.badge import VERDICT_COLOURS, Badge, badge_html, worst

#: Every verdict word a report can end on, from the models that define them.
WORDS = {
    *(str(v) for v in GateVerdict),
    *(str(v) for v in AppLevel),
    *(str(v).upper() for v in Level),
    *(str(v) for v in ReaderRisk),
}


def test_every_verdict_word_has_its_colour() -> None:
    assert set(VERDICT_COLOURS) >= WORDS, WORDS - set(VERDICT_COLOURS)


def _luminance(colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("word", sorted(VERDICT_COLOURS))
def test_white_text_reads_on_every_badge(word: str) -> None:
    """WCAG's contrast ratio, by its formula: 4.5:1 at least for normal text (AA)."""
    assert 1.05 / (_luminance(VERDICT_COLOURS[word]) + 0.05) >= 4.5


def test_the_worst_verdict_is_shown() -> None:
    assert worst(["SAFE", "CRASH", "CORRUPT"]) == "CRASH"
    assert worst(["moves", "safe"]) == "MOVES"  # analyze's levels are lower-case
    assert worst(["DATA_LOSS", "REFUSED"]) == "DATA_LOSS"
    assert worst(["SAFE", "SOMETHING_NEW"]) == "SOMETHING_NEW"  # unknown ranks as UNKNOWN
    assert worst([]) is None


def test_the_badge_escapes_its_text() -> None:
    page = badge_html(Badge("CRASH", "orders<script>"))
    assert 'style="background:#cf222e">CRASH</span>' in page
    assert "orders&lt;script&gt;" in page and "<script>" not in page
    assert 'background:#57606a">X&lt;B&gt;' in badge_html(Badge("x<b>"))
