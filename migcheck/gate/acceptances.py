"""``--accept FILE``: changes accepted on purpose, each with its reason, and whether one
covers a change or has gone stale.

The file is YAML::

    accept:
      - topic: orders
        to: 6
        verdict: CRASH        # a GateVerdict, or a rule code such as MC201
        reason: "runbook OPS-1 scheduled for the window"
        expires: "2026-12-31" # optional: the last day it is valid

An acceptance is a promise about one exact change, so it is read strictly: an unknown
key (a ``reasn`` typo), a duplicate key, a missing or empty reason, a verdict that is
neither a :class:`~migcheck.model.gate.GateVerdict` nor a code of
:data:`~migcheck.model.gate.GATE_RULES`, a ``to`` that is not a positive integer or a date
that does not parse all stop the gate with one line naming the file, the line and the
place (``accept[2].reason: required``; entries count from 0, as in JSON paths).  A
lenient reader would let a typo accept nothing, or everything, in silence.

Pure, but for reading the file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from migcheck.errors import UsageError
from migcheck.model.gate import GATE_RULES, Acceptance, AcceptanceMatch, GateVerdict
from migcheck.untrusted import visible

#: The keys an entry may have; any other is refused.
_KEYS = ("topic", "to", "verdict", "reason", "expires")
_REQUIRED = ("topic", "to", "verdict", "reason")
#: The order the fields of a stale match are named in.
_FIELDS = ("to", "verdict", "expires")


class _StrictLoader(yaml.SafeLoader):
    """pyyaml's safe loader, but a mapping with a key twice is an error: pyyaml keeps the
    last value silently, and an acceptance with two ``to:`` lines means nothing certain."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


@dataclass(frozen=True)
class _Doc:
    """The parsed file beside its node tree, so each error can name its line."""

    path: str
    data: Any
    node: yaml.Node | None


def _fail(path: str, node: yaml.Node | None, where: str, problem: str) -> UsageError:
    line = f":{node.start_mark.line + 1}" if node is not None else ""
    place = f" {where}:" if where else ""
    return UsageError(f"--accept {visible(path)}{line}:{place} {problem}")


def load_acceptances(path: str) -> list[Acceptance]:
    """The acceptances of ``path``, in file order; :class:`UsageError` (one line naming
    the file, the line and the entry's field) for a file that cannot be read or that
    breaks any rule of the module's docstring.  ``accept: []`` is valid and accepts
    nothing."""
    doc = _parse(path, _read(path))
    entries, node = _entries(doc)
    return [_acceptance(doc, i, e, n) for i, (e, n) in enumerate(zip(entries, node, strict=True))]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise UsageError(f"--accept {visible(path)}: no such file") from None
    except UnicodeDecodeError:
        raise UsageError(f"--accept {visible(path)}: not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"--accept {visible(path)}: cannot read: {e.strerror}") from None


def _parse(path: str, text: str) -> _Doc:
    """The YAML of ``text``, one document, as data and as nodes; a syntax error becomes
    one line with pyyaml's own problem and position."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = _yaml_problem(e)
        raise UsageError(f"--accept {visible(path)}{line}: not valid YAML: {problem}") from None
    except yaml.YAMLError as e:
        problem = " ".join(str(e).split())
        raise UsageError(f"--accept {visible(path)}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return _Doc(path, data, node)


def _yaml_problem(e: yaml.MarkedYAMLError) -> str:
    """pyyaml's context and problem on one line ("expected a single document in the
    stream, but found another document")."""
    parts = [str(p) for p in (e.context, e.problem) if p]
    text = ", ".join(parts) if len(parts) == 2 and parts[1].startswith("but ") else ": ".join(parts)
    return " ".join((text or "not YAML").split())


def _value_node(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The node of ``key``'s value in the mapping ``node`` (for its line), if any."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node
    return node


def _entries(doc: _Doc) -> tuple[list[Any], list[yaml.Node | None]]:
    """The list under ``accept``, with each item's node."""
    if not isinstance(doc.data, dict):
        raise _fail(doc.path, doc.node, "", "expected a mapping with the key 'accept'")
    extra = sorted(str(k) for k in doc.data if k != "accept")
    if extra:
        where = _value_node(doc.node, extra[0])
        raise _fail(doc.path, where, visible(extra[0]), "unknown key (only 'accept')")
    if "accept" not in doc.data:
        raise _fail(doc.path, doc.node, "accept", "required (a list of acceptances)")
    entries = doc.data["accept"]
    node = _value_node(doc.node, "accept")
    if not isinstance(entries, list):
        raise _fail(doc.path, node, "accept", "expected a list of acceptances")
    nodes = list(node.value) if isinstance(node, yaml.SequenceNode) else [node] * len(entries)
    return entries, nodes


def _acceptance(doc: _Doc, i: int, entry: Any, node: yaml.Node | None) -> Acceptance:
    where = f"accept[{i}]"
    if not isinstance(entry, dict):
        raise _fail(doc.path, node, where, "expected a mapping (topic, to, verdict, reason)")
    for key in entry:
        if key not in _KEYS:
            raise _fail(
                doc.path,
                _value_node(node, str(key)),
                f"{where}.{visible(key)}",
                f"unknown key (expected one of {', '.join(_KEYS)})",
            )
    for key in _REQUIRED:
        if key not in entry:
            raise _fail(doc.path, node, f"{where}.{key}", "required")

    def field(key: str, check: Any) -> Any:
        try:
            return check(entry[key])
        except ValueError as e:
            raise _fail(doc.path, _value_node(node, key), f"{where}.{key}", str(e)) from None

    return Acceptance(
        topic=field("topic", _topic),
        to=field("to", _to),
        verdict=field("verdict", _verdict),
        reason=field("reason", _reason),
        expires=field("expires", _expires) if entry.get("expires") is not None else None,
    )


def _topic(value: Any) -> str:
    if not isinstance(value, str):
        # YAML reads ``topic: 007`` as the number 7: guessing the name back is unsafe.
        raise ValueError("must be a string (quote a topic whose name YAML reads as a number)")
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _to(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"must be a positive integer, not {visible(repr(value))}")
    return value


def _verdict(value: Any) -> str:
    if isinstance(value, str) and (value in GateVerdict.__members__ or value in GATE_RULES):
        return value
    raise ValueError(
        f"{visible(repr(value))} is neither a verdict ({', '.join(GateVerdict)}) "
        f"nor a rule code ({min(GATE_RULES)}..{max(GATE_RULES)}, docs/rules.md)"
    )


def _reason(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("required: say why the change is accepted")
    return value.strip()


def _expires(value: Any) -> str:
    """The ISO day of ``value`` (an empty ``expires:`` means none and never gets here)."""
    # Unquoted, YAML reads 2026-12-31 as a date already; a timestamp is not a day.
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            pass
    raise ValueError(f"{visible(repr(value))} is not a date (YYYY-MM-DD)")


def expired(acceptance: Acceptance, today: dt.date) -> bool:
    """Whether ``acceptance`` has run out: ``expires`` is its last valid day."""
    return acceptance.expires is not None and dt.date.fromisoformat(acceptance.expires) < today


def differing(
    acceptance: Acceptance,
    to: int,
    verdict: GateVerdict,
    codes: Sequence[str],
    today: dt.date,
) -> tuple[str, ...]:
    """The fields in which ``acceptance`` fails to cover the change, in the order
    ``to``, ``verdict``, ``expires``; empty when it covers it.  The topic is the caller's
    to compare."""
    differs = {
        "to": acceptance.to != to,
        "verdict": acceptance.verdict != verdict.value and acceptance.verdict not in codes,
        "expires": expired(acceptance, today),
    }
    return tuple(f for f in _FIELDS if differs[f])


def match(
    acceptances: Sequence[Acceptance],
    topic: str,
    to: int,
    verdict: GateVerdict,
    codes: Sequence[str],
    today: dt.date,
) -> AcceptanceMatch:
    """How ``acceptances`` meet the change of ``topic`` to ``to`` partitions, judged
    ``verdict`` with the rule ``codes``.

    - Covered (``accepted=True``, ``stale=()``) by the first acceptance, in file order,
      whose topic, ``to`` and verdict match (its verdict is the change's verdict or one of
      ``codes``) and which has not expired on ``today``.
    - Otherwise, when some acceptance names the topic, it is stale: ``acceptance`` is
      the nearest one (fewest differing fields; the first in file order on a tie) and
      ``stale`` names the fields that differ, so the report can say "to differs
      (accepted 6, proposed 12)" from the acceptance and the change.
    - When none names the topic: not accepted, no acceptance, nothing stale.
    """
    best: tuple[Acceptance, tuple[str, ...]] | None = None
    for acceptance in acceptances:
        if acceptance.topic != topic:
            continue
        fields = differing(acceptance, to, verdict, codes, today)
        if not fields:
            return AcceptanceMatch(accepted=True, acceptance=acceptance, stale=())
        if best is None or len(fields) < len(best[1]):
            best = (acceptance, fields)
    if best is None:
        return AcceptanceMatch(accepted=False, acceptance=None, stale=())
    return AcceptanceMatch(accepted=False, acceptance=best[0], stale=best[1])
