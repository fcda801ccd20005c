"""The read: from work units on Kafka (or a key export) to a figure source.

- :mod:`~migcheck.analysis.read.plan` turns a request and the session's kind into a
  typed :class:`~migcheck.analysis.read.plan.ReadPlan`: the strategy, the figures'
  spec (built once) and the JVM profile.
- One module per strategy, each a :class:`~migcheck.analysis.read.strategy.Strategy`
  whose ``load`` gives a :class:`~migcheck.analysis.figures.FigureSource`:
  :mod:`~migcheck.analysis.read.driver` (the driver's read),
  :mod:`~migcheck.analysis.read.share` (the driver's share, beside the tasks),
  :mod:`~migcheck.analysis.read.tasks` (tasks of whole partitions),
  :mod:`~migcheck.analysis.read.chunks` (chunks and merge) and
  :mod:`~migcheck.analysis.read.keysfile` (a key export);
  :mod:`~migcheck.analysis.read.frame` holds histories Spark keeps.
- :mod:`~migcheck.analysis.read.session` starts Spark for the plans and runs their
  jobs together.

Nothing here decides what the figures mean: :mod:`migcheck.analysis.aggregate` does, from
the source alone.
"""
