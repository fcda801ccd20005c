"""The analysis: Spark aggregation, statistics, report entries, verdicts and the gate.

Data flows one way: :mod:`~migcheck.analysis.sources` gives records,
:mod:`~migcheck.analysis.aggregate` counts them on Spark,
:mod:`~migcheck.analysis.entries` and :mod:`~migcheck.analysis.verdicts` turn
the counts into the report (:mod:`~migcheck.model.analyze`), and
:mod:`~migcheck.commands.analyze` wires the steps for ``migcheck analyze``.
"""
