"""The verdict as a coloured badge at the top of an HTML report: one registry of colours.

Every verdict word a report can end on (``app``'s CRASH, CORRUPT, SAFE; ``analyze``'s
levels; ``readers``' risks; the gate's verdicts) has its colour here and nowhere else, so
a word reads the same in every report.  The registry lists the words worst first: a
report with several verdicts (a topic each, a reader each) shows its worst.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from migcheck.model.analyze import Level
from migcheck.model.gate import GateVerdict
from migcheck.model.readers import ReaderRisk
from migcheck.untrusted import html_text

#: Verdict word -> badge background, worst first.  Red: the change stops a reader or
#: destroys data; orange: it corrupts state or stalls; amber: a risk to look at; grey:
#: what cannot be said; purple: not a verdict on the data (refused, judged elsewhere);
#: blue: keys move, no reader at risk; green: nothing to fear.  Each colour holds white
#: text at a contrast of 4.5:1 or more (WCAG AA).  Each word is its enum's (``app``'s
#: levels are the gate's words: an AppLevel's value is a GateVerdict's).
VERDICT_COLOURS: dict[str, str] = {
    GateVerdict.DATA_LOSS: "#82071e",
    GateVerdict.CRASH: "#cf222e",
    GateVerdict.CORRUPT: "#bc4c00",
    GateVerdict.STALL: "#bc4c00",
    GateVerdict.LOSS_RISK: "#9a6700",
    GateVerdict.ORDER: "#9a6700",
    Level.UNPREDICTABLE.upper(): "#57606a",
    GateVerdict.UNKNOWN: "#57606a",
    ReaderRisk.APP: "#8250df",
    GateVerdict.REFUSED: "#8250df",
    GateVerdict.MOVES: "#0969da",
    GateVerdict.SAFE: "#1a7f37",
    Level.EMPTY.upper(): "#1a7f37",
}

#: A word the registry does not know (a report from a newer migcheck, rendered again).
UNKNOWN_COLOUR = VERDICT_COLOURS[GateVerdict.UNKNOWN]


@dataclass(frozen=True)
class Badge:
    """A report's verdict word and the short line shown beside it."""

    verdict: str
    text: str = ""


def worst(words: Iterable[str]) -> str | None:
    """The worst of ``words`` by the registry's order (upper-cased: analyze's levels are
    lower-case in its JSON); a word it does not know counts as UNKNOWN.  None for none."""
    order = list(VERDICT_COLOURS)
    known = [w.upper() for w in words]
    unknown = order.index(GateVerdict.UNKNOWN)
    rank = {w: order.index(w) if w in VERDICT_COLOURS else unknown for w in known}
    return min(known, key=rank.__getitem__, default=None)


def badge_html(badge: Badge) -> str:
    """The badge as the page's first element: the word on its colour, then the line."""
    word = badge.verdict.upper()
    colour = VERDICT_COLOURS.get(word, UNKNOWN_COLOUR)
    text = f' <span class="verdict-text">{html_text(badge.text)}</span>' if badge.text else ""
    return (
        f'<p class="verdict" id="verdict"><span class="badge" style="background:{colour}">'
        f"{html_text(word)}</span>{text}</p>"
    )
