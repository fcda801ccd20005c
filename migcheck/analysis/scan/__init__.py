"""The read: from work units on Kafka (or a key export) to a figure source.

- :mod:`~migcheck.analysis.scan.plan` turns a request and the session's kind into a
  typed :class:`~migcheck.analysis.scan.plan.ReadPlan`: the strategy, the figures'
  spec (built once) and the JVM profile.
- One module per strategy, each a :class:`~migcheck.analysis.scan.strategy.Strategy`
  whose ``load`` gives a :class:`~migcheck.analysis.figures.FigureSource`:
  :mod:`~migcheck.analysis.scan.driver` (the driver's read),
  :mod:`~migcheck.analysis.scan.share` (the driver's share, beside the tasks),
  :mod:`~migcheck.analysis.scan.tasks` (tasks of whole partitions),
  :mod:`~migcheck.analysis.scan.chunks` (chunks and merge) and
  :mod:`~migcheck.analysis.scan.keysfile` (a key export);
  :mod:`~migcheck.analysis.scan.frame` holds histories Spark keeps.
- :mod:`~migcheck.analysis.scan.session` starts Spark for the plans and runs their
  jobs together.

Nothing here decides what the figures mean: :mod:`migcheck.analysis.aggregate` does, from
the source alone.
"""
