"""A change's verdict over every shape of the app the evidence allows.

A model built without ``describe()`` may not know whether two topics are joined
(:attr:`~migcheck.apps.build.Model.alternatives`), and a join decides which check
fails first: co-partitioning is checked before any internal topic.  So the change is
judged on each shape, and where the shapes disagree on what the app prints first, no
single error is quoted as certain: each one is named with the condition under which it
comes, in the order Kafka Streams checks them.  The level is the worst of them (the model
fails closed), so it stays CRASH when every shape crashes.

Pure: :func:`judge` over :func:`~migcheck.apps.rules.verdict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from migcheck.apps.build import Model
from migcheck.apps.rules import AppVerdict, Reason, in_check_order, verdict, worst
from migcheck.model.app import AppLevel

_SEVERITY = (AppLevel.CRASH, AppLevel.CORRUPT, AppLevel.SAFE)


@dataclass(frozen=True)
class Case:
    """What the app does first in some of its possible shapes."""

    level: AppLevel
    #: the error it prints first (its first CRASH reason); None when nothing crashes
    first: Reason | None
    #: when the app is one of those shapes; None when it is every shape (certain)
    condition: str | None


@dataclass(frozen=True)
class Judgement:
    """The verdict of a change on a model that may be several shapes.

    ``verdict`` is the model's own shape's (its sub-topologies and tasks), its level the
    worst over every shape; ``reasons`` are every shape's, each with the condition under
    which it holds (None: in every shape), in the order Kafka Streams checks them;
    ``cases`` is one outcome when the evidence settles what comes first, else each
    distinct one in the order Kafka Streams would raise it (crashes by their check, then
    the shapes where nothing crashes).
    """

    verdict: AppVerdict
    reasons: tuple[tuple[Reason, str | None], ...]
    cases: tuple[Case, ...]

    @property
    def certain(self) -> bool:
        return len(self.cases) == 1

    @property
    def error(self) -> str | None:
        """The error the app prints first, when the evidence leaves only one."""
        first = self.cases[0].first if self.certain else None
        return first.text if first else None


def judge(model: Model, proposed: Mapping[str, int]) -> Judgement:
    """``proposed``'s verdict on every shape of ``model``."""
    shapes = [(model.app, model.condition)]
    shapes += [(a.app, a.condition) for a in model.alternatives]
    verdicts = [(verdict(app, proposed), condition) for app, condition in shapes]
    main = verdicts[0][0]
    level = worst([v.level for v, _ in verdicts])
    return Judgement(replace(main, level=level), _reasons(model, verdicts), _cases(model, verdicts))


def _first(v: AppVerdict) -> Reason | None:
    return next((r for r in v.reasons if r.level == AppLevel.CRASH), None)


def _when(conditions: list[str | None], every: int) -> str | None:
    """The condition of what holds in ``conditions``' shapes: None in all of them."""
    if len(conditions) == every:
        return None
    return " or ".join(c for c in conditions if c)


def _reasons(
    model: Model, verdicts: list[tuple[AppVerdict, str | None]]
) -> tuple[tuple[Reason, str | None], ...]:
    held: dict[tuple[object, ...], tuple[Reason, list[str | None]]] = {}
    for v, condition in verdicts:
        for r in v.reasons:  # one reason in several shapes (or sub-topologies) once
            _, conditions = held.setdefault(_same(r), (r, []))
            if condition not in conditions:
                conditions.append(condition)
    ordered = in_check_order(model.app, [r for r, _ in held.values()])
    return tuple((r, _when(held[_same(r)][1], len(verdicts))) for r in ordered)


def _same(r: Reason) -> tuple[object, ...]:
    """A reason as the report states it: shapes number their sub-topologies apart."""
    return r.level, r.check, r.text, r.topics, r.stores


def _cases(model: Model, verdicts: list[tuple[AppVerdict, str | None]]) -> tuple[Case, ...]:
    by_first: dict[tuple[str | None, AppLevel], list[tuple[AppVerdict, str | None]]] = {}
    for v, condition in verdicts:
        first = _first(v)
        by_first.setdefault((first.text if first else None, v.level), []).append((v, condition))
    cases = [
        Case(level, _first(shapes[0][0]), _when([c for _, c in shapes], len(verdicts)))
        for (_, level), shapes in by_first.items()
    ]
    crashes = in_check_order(model.app, [o.first for o in cases if o.first])

    def key(o: Case) -> tuple[int, int]:
        return (0, crashes.index(o.first)) if o.first else (1, _SEVERITY.index(o.level))

    return tuple(sorted(cases, key=key))
