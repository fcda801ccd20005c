"""What every report format shares: numbers as people read them, and the facts to show.

Pure functions over the report (:mod:`migcheck.model.analyze`).  Estimates
(sampled topics) are always shown with their interval, so nobody takes an
extrapolation for a count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from migcheck.model.analyze import (
    CandidateEntry,
    KeyLayout,
    Mode,
    Report,
    SourceKind,
    State,
    TopicEntry,
)

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
DASH = "\u2013"  # en dash between interval bounds
ARROW = "\u2192"


def format_bytes(n: float) -> str:
    """Bytes in binary units (``0 B``, ``1023 B``, ``1.0 KiB``, ``1.5 MiB``).

    Rounds before choosing the unit, so a value just under a boundary reads
    ``1.0 MiB`` rather than ``1024.0 KiB``.  Exact bytes stay in the JSON.
    """
    if abs(round(n)) < 1024:
        return f"{round(n)} B"
    value = float(n)
    for unit in _UNITS[1:]:
        value /= 1024
        if abs(round(value, 1)) < 1024 or unit == _UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_count(n: float) -> str:
    """A count with thousands separators; estimates arrive as floats and are rounded."""
    return f"{round(n):,}"


def format_fraction(x: float) -> str:
    """A share as a percentage that never rounds a movement away.

    ``0.0%`` would read as "nothing moves" when 3 keys of a million do, which
    is the one thing a migration check must not say; so tiny non-zero shares
    read ``<0.1%`` and almost-all reads ``>99.9%``.
    """
    if 0 < x < 0.0005:
        return "<0.1%"
    if 0.9995 <= x < 1:
        return ">99.9%"
    return f"{x:.1%}"


def format_estimate(
    value: float,
    interval: Sequence[float] | None,
    fmt: Callable[[float], str] = format_count,
    label: str = "95%",
    approx: bool = False,
) -> str:
    """An exact figure as is; an estimate as ``~912 (95%: 850-980)``, with an en dash.

    The interval is what marks a figure as an estimate in the schema.  ``approx``
    marks an estimate the report carries no interval for (e.g. a sampled
    topic's state size) with ``~`` alone.
    """
    if interval is None:
        return ("~" if approx else "") + fmt(value)
    lo, hi = interval
    return f"~{fmt(value)} ({label}: {fmt(lo)}{DASH}{fmt(hi)})"


def short_count(n: float) -> str:
    """A count in at most four characters (``9999``, ``12k``, ``1.2M``) for heatmap cells."""
    n = round(n)
    if abs(n) < 10_000:
        return str(n)
    for unit, div in (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        x = n / div
        if abs(x) < 9.95:
            return f"{x:.1f}{unit}"
        if abs(x) < 999.5:
            return f"{x:.0f}{unit}"
    return f"{n:.0e}"


def source_line(report: Report) -> str:
    source = report["source"]
    if source.get("kind") == SourceKind.KAFKA:
        return f"Kafka at {source.get('bootstrap_servers')}"
    if source.get("kind") == SourceKind.FILE:
        return f"key file {source.get('path')}"
    return ", ".join(f"{k} {v}" for k, v in source.items())


def mode_line(report: Report) -> str:
    if report["mode"] == Mode.FULL:
        return "full scan: every record read, figures are exact"
    per = report.get("sample_per_partition")
    size = f"up to {per:,} records per partition" if per else "a sample"
    return f"sample of {size}; estimates are marked ~ with their intervals"


def gate_summary(report: Report) -> str | None:
    """The gate's outcome in one line, or None when no gate was set."""
    gate = report.get("gate") or {}
    rules = []
    if gate.get("fail_if_moved"):
        rules.append("--fail-if-moved")
    if (fraction := gate.get("max_moved_fraction")) is not None:
        rules.append(f"--max-moved-fraction {format_fraction(fraction)}")
    if not rules and not gate.get("failed"):
        return None
    rule = f" ({', '.join(rules)})" if rules else ""
    if gate.get("failed"):
        return f"FAILED{rule}: {gate.get('reason') or 'no reason given'}"
    return f"passed{rule}"


#: What each key layout other than plain means, for the topic facts.
_LAYOUTS: dict[str, str] = {
    KeyLayout.WINDOW: "window store changelog: hashed without the 12-byte [start][seqnum] suffix",
    KeyLayout.SESSION: "session store changelog: hashed without the 16-byte [end][start] suffix",
}


def _client_facts(topic: TopicEntry) -> list[tuple[str, str]]:
    """Which clients place keys this way, and what else the keys cannot tell apart."""
    facts = []
    if topic.get("clients"):
        facts.append(("clients", str(topic["clients"])))
    if topic.get("placed_alike"):
        facts.append(("placed alike by", ", ".join(topic["placed_alike"])))
    if topic.get("mixed_shares"):
        shares = ", ".join(
            f"{' and '.join(s['partitioners'])} {format_fraction(s['share'])}"
            for s in topic["mixed_shares"]
        )
        facts.append(("written by two clients", shares))
    return facts


def topic_facts(topic: TopicEntry) -> list[tuple[str, str]]:
    """The facts a reviewer checks before trusting a topic's prediction, as (name, value)."""
    sampled = bool(topic["sampled"])
    name = topic["partitioner"]
    if name is None:
        name = "none identified" if not topic["predictable"] else "none needed (no keyed records)"
    if topic["partitioner_forced"]:
        name += " (forced with --partitioner)"
    conformance = topic["conformance"]
    if conformance is not None:
        name += f", conformance {format_fraction(conformance)}"
    scored = ", ".join(
        f"{p} {format_fraction(c)}"
        for p, c in (topic.get("conformance_by_partitioner") or {}).items()
        if c is not None
    )
    if scored:
        name += f" (scored: {scored})"
    state = (
        "live state (latest record per key, tombstones dropped)"
        if topic["state"] == State.LIVE
        else "every keyed record (delete policy)"
    )
    records = format_estimate(topic["state_records"], None, approx=sampled)
    size = format_estimate(topic["state_bytes"], None, format_bytes, approx=sampled)
    return [
        ("cleanup.policy", topic["cleanup_policy"]),
        ("partitioner", name),
        *_client_facts(topic),
        *_layout_fact(topic),
        (
            "records scanned",
            f"{topic['records_scanned']:,} of {topic['records_total']:,}"
            + (" (sampled)" if sampled else ""),
        ),
        ("null-key records", f"{topic['null_key_records']:,} (not hashed, not predicted)"),
        ("unhashed records", f"{topic['unhashed_records']:,}"),
        (
            "non-conforming",
            f"{topic['non_conforming_keys']:,} keys, {topic['non_conforming_records']:,} records",
        ),
        (
            "distinct keys",
            format_estimate(
                topic["distinct_keys"],
                topic["distinct_keys_interval"],
                label=keys_label(topic, "distinct_keys"),
            ),
        ),
        ("state counted", f"{state}: {records} records, {size}"),
        *sample_facts(topic),
    ]


#: What a report written before 95% intervals says of its keys' intervals.
PREDATES = (
    "this report predates 95% intervals: its distinct and moved keys' intervals are "
    "certain bounds (keys seen to keys seen plus records not read)"
)


def keys_label(entry: Mapping[str, Any], figure: str) -> str:
    """How a keys figure's interval is labelled: ``95%``, or ``bounds`` where it is the
    certain bounds (the windows showed the assumption fails, or a report written before
    the ``*_bounds`` fields, whose keys' intervals were bounds)."""
    bounds = f"{figure}_bounds"
    if bounds not in entry or entry[f"{figure}_interval"] == entry[bounds]:
        return "bounds"
    return "95%"


def sample_facts(topic: TopicEntry) -> list[tuple[str, str]]:
    """A sampled topic's line on its intervals: the assumption they make, what the
    windows show against it, or that the report predates them."""
    if not topic["sampled"] or topic["distinct_keys_interval"] is None:
        return []
    check = topic.get("sample_assumption")
    if "distinct_keys_bounds" not in topic or not check:
        return [("intervals", PREDATES)]
    if check["holds"]:
        return [("intervals", f"95%, assuming {check['assumption']}")]
    found = "; ".join(check["findings"])
    return [
        (
            "intervals",
            f"the sample does not represent the unread records: {found}. Keys show their "
            "certain bounds; records and bytes their 95% intervals",
        )
    ]


def bounds_rows(topic: TopicEntry) -> list[tuple[str, list[str]]]:
    """The certain bounds of a sampled topic's figures, one row per figure and a column
    per candidate (the distinct keys in each): where a user looks for the worst case."""
    cands = topic["candidates"]
    if not topic.get("distinct_keys_bounds") or not cands:
        return []
    distinct = _bounds(topic.get("distinct_keys_bounds"), format_count)
    rows = [("distinct keys", [distinct] * len(cands))]
    for name, fmt in _BOUNDED:
        field = f"moved_{name.split()[-1]}_bounds"
        rows.append((name, [_bounds(_get(c, field), fmt) for c in cands]))
    return rows


_BOUNDED: tuple[tuple[str, Callable[[float], str]], ...] = (
    ("moved keys", format_count),
    ("moved fraction", format_fraction),
    ("moved records", format_count),
    ("moved bytes", format_bytes),
)


def _get(c: CandidateEntry, field: str) -> Sequence[float | None] | None:
    return c.get(field)  # type: ignore[return-value]  # field: a moved_*_bounds key


def _bounds(bounds: Sequence[float | None] | None, fmt: Callable[[float], str]) -> str:
    """``lo-hi``; ``at least lo`` where nothing bounds it above."""
    if not bounds:
        return "-"
    lo, hi = bounds
    if lo is None:
        return "-"
    return f"at least {fmt(lo)}" if hi is None else f"{fmt(lo)}{DASH}{fmt(hi)}"


def _layout_fact(topic: TopicEntry) -> list[tuple[str, str]]:
    """The key layout, only when the key was not hashed whole (absent means plain)."""
    layout = str(topic.get("key_layout", KeyLayout.PLAIN))
    if layout == KeyLayout.PLAIN:
        return []
    meaning = _LAYOUTS.get(layout)  # a newer report's layout shows by name alone
    return [("key layout", f"{layout} ({meaning})" if meaning else layout)]


def candidate_rows(topic: TopicEntry) -> list[tuple[str, list[str]]]:
    """The side-by-side comparison: one row per measure, one column per candidate."""
    cands = topic["candidates"]
    return [
        (
            "moved keys",
            [
                format_estimate(
                    c["moved_keys"], c["moved_keys_interval"], label=keys_label(c, "moved_keys")
                )
                for c in cands
            ],
        ),
        (
            "moved fraction",
            [
                format_estimate(c["moved_fraction"], c["moved_fraction_interval"], format_fraction)
                for c in cands
            ],
        ),
        (
            "expected (uniform hashing)",
            [format_fraction(c["expected_moved_fraction"]) for c in cands],
        ),
        (
            "moved records",
            [format_estimate(c["moved_records"], c["moved_records_interval"]) for c in cands],
        ),
        (
            "moved bytes",
            [
                format_estimate(c["moved_bytes"], c["moved_bytes_interval"], format_bytes)
                for c in cands
            ],
        ),
        ("skew (max/mean keys)", [f"{c['skew']:.2f}" for c in cands]),
    ]
