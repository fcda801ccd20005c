"""The stream processors migcheck judges, one module each (Kafka Streams, ksqlDB, Quix
Streams, Faust), and the one table that lists them (:mod:`~migcheck.frameworks.registry`).

:mod:`~migcheck.frameworks.base` says what a framework module holds.  This layer sits
below ``readers/`` and ``report/`` (which read the frameworks' names, naming, evidence and
texts) and above ``runbook/`` (whose shared actions each procedure is made of).
"""
