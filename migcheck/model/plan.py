"""The ``migcheck plan`` report's one typed definition: its JSON, field by field.

Like :mod:`migcheck.model.app`, each TypedDict is one JSON object with
its fields in the documented order; :mod:`migcheck.report.schema` derives the
key order and the saved-report check from here, and ``docs/report-schema.md``
is tested against it.  Today's figures sit at the top level and a proposed
change's under ``proposed``, with the same fields, so that a script reads
both the same way.  After the report's kind, the recommendation comes first: it is
what an operator reads before anything else.
"""

from typing import TypedDict

from migcheck.model.app import AppLevel
from migcheck.model.header import Kind


class PlanSubtopology(TypedDict):
    id: int
    sources: list[str]
    stores: list[str]
    tasks: int


class PlanInstance(TypedDict):
    instance: str
    threads: int
    tasks: int | None  # None when predicted (offline, or no member is running)
    tasks_per_thread: list[int] | None


class PlanBalance(TypedDict):
    busiest_over_least_pct: int | None
    even_split: list[int]
    even_instances: list[int]


class PlanStandby(TypedDict):
    replicas: int
    tasks: int
    unplaced: int
    restore_records: int | None
    largest_task_records: int | None


class PlanNarrow(TypedDict):
    topic: str
    partitions: int
    upstream_tasks: int
    downstream_subtopologies: list[int]
    stores: list[str]


class PlanFigures(TypedDict):
    recommendation: str
    tasks: int
    ceiling: int
    subtopologies: list[PlanSubtopology]
    instances: int
    threads: int
    active_threads: int
    idle_threads: int
    instances_needed: int
    threads_needed: int
    tasks_per_instance: list[int]
    tasks_per_thread: list[int]
    balance: PlanBalance
    standby: PlanStandby
    narrow_repartitions: list[PlanNarrow]


class PlanProposal(PlanFigures):
    changes: dict[str, int]
    verdict: AppLevel  # migcheck app's, for the proposed change
    verdict_reasons: list[str]


class PlanReport(Kind, PlanFigures):
    migcheck_version: str
    generated_at: str
    application_id: str | None
    mode: str  # "live" or "offline"
    basis: str  # "topology", "broker" or "inferred"
    assignment: str  # "observed" (read from the group) or "predicted"
    members: list[PlanInstance]
    notes: list[str]
    proposed: PlanProposal | None
