"""The opt-in tofu lane (``tox -e tofu``): collected only when ``MIGCHECK_TOFU`` is set, so
the default suite neither builds OpenTofu nor reports a skip for it."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("MIGCHECK_TOFU") else ["test_*.py"]
