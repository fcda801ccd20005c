"""``migcheck gate``: the approval check where partition changes are proposed.

- :mod:`~migcheck.gate.inputs` reads what proposes a change (a Terraform plan, Strimzi or
  Conduktor manifests, a kafka-gitops plan, ``--change``) into
  :class:`~migcheck.model.gate.Proposal` s, one module per form;
- :mod:`~migcheck.gate.acceptances` reads ``--accept FILE`` and says whether an acceptance
  covers a change, or why it is stale;
- :mod:`~migcheck.gate.judge` gives each change its verdict and rule codes from the live
  count, its readers' judgements and the keys that move.

Pure, but for reading the files it is given.  The command (:mod:`migcheck.commands.gate`)
asks the cluster; :mod:`migcheck.report.gate` writes the PR comment.
"""
