"""The analysis: Spark aggregation, statistics, report entries, verdicts and the gate.

Data flows one way: :mod:`~migcheck.analysis.scan` plans and runs the read and gives a
figure source, :mod:`~migcheck.analysis.aggregate` turns its figures into counts,
:mod:`~migcheck.analysis.entries` and :mod:`~migcheck.analysis.verdicts` turn
the counts into the report (:mod:`~migcheck.model.analyze`), and
:mod:`~migcheck.commands.analyze` wires the steps for ``migcheck analyze``.
"""
