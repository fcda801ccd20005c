"""Who reads a topic, what kind of reader each is, and what a partition increase does to it.

- :mod:`~migcheck.readers.naming`: each framework's naming rules (pure);
- :mod:`~migcheck.readers.kinds`: the registry of rules that tell a group's kind, with
  the evidence (pure);
- :mod:`~migcheck.readers.standing`: a group's offsets and lag on a topic (pure);
- :mod:`~migcheck.readers.verdicts`: what the increase does to a reader without state:
  ORDER, LOSS_RISK, UNKNOWN (pure);
- :mod:`~migcheck.readers.discovery`: finds the readers on the cluster (read-only).

``migcheck readers`` reports them; ``app``, ``plan`` and ``runbook`` ask it a group's
kind before they treat it as anything.
"""
