"""Which Spark Connect session a check reattaches to: a warm one, never one in use.

A new session on a Spark Connect server starts Python workers of its own (the server
keys them by the session's artifacts): their start and imports took a check's first
task 1.7 to 2.3 s on a new session, 0.1 s on one an earlier check had used (measured:
the probe task, the first a check runs).  And the server keeps each session's worker
daemon until the server ends, so a session per check would pile up processes on it.

So the checks of one user reattach to the sessions of a small pool, one lock file each
(``<cache>/connect/<host>-<port>/session-<n>.json``, holding the session's id).  A check
takes the first whose lock is free; the lock is the process's own (``flock``), freed
when it ends, however it ends.  One after another, checks share warm workers; at once,
each has a session of its own, so that no check sees another's settings.  A session the
server no longer knows (it expired, or the server restarted) is replaced by a new id.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from migcheck.files import cache_root

#: Sessions one user keeps on one server: checks at once beyond this take a session of
#: their own, released as they end.
POOL_SIZE = 4


@dataclass
class Slot:
    """A session of the pool, locked by this process: its id, the ``--conf`` keys the
    check that used it last set (unset before this check sets its own), and the
    artifacts it was given (``remote_artifacts``: not uploaded again)."""

    session_id: str
    handle: IO[str] | None = None
    conf_keys: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)

    @property
    def pooled(self) -> bool:
        """Whether the session outlives this check (else it is released as it ends)."""
        return self.handle is not None


def pool_dir(host: str, port: int) -> Path:
    """The pool of a server, by its address (kept to characters a file name takes)."""
    name = re.sub(r"[^A-Za-z0-9.-]", "_", f"{host}-{port}")
    return cache_root() / "connect" / name


def take(host: str, port: int) -> Slot:
    """The first free session of the server's pool, locked; a session of this check's own
    when every one is taken or the cache cannot be written."""
    with contextlib.suppress(OSError):
        folder = pool_dir(host, port)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        for n in range(POOL_SIZE):
            slot = _try(folder / f"session-{n}.json")
            if slot is not None:
                return slot
    return Slot(str(uuid.uuid4()))


def _try(path: Path) -> Slot | None:
    handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    try:
        saved = json.loads(handle.read() or "{}")
        slot = Slot(
            str(uuid.UUID(saved["session_id"])),
            handle,
            [str(k) for k in saved.get("conf", [])],
            [str(a) for a in saved.get("artifacts", [])],
        )
    except (ValueError, KeyError, TypeError):  # a new slot, or a damaged one
        slot = Slot(str(uuid.uuid4()), handle)
        save(slot)
    return slot


def renew(slot: Slot) -> None:
    """A new id for a session the server no longer knows."""
    slot.session_id = str(uuid.uuid4())
    slot.conf_keys, slot.artifacts = [], []
    save(slot)


def save(slot: Slot) -> None:
    """Write the slot back, under its lock (a pooled slot only)."""
    if slot.handle is None:
        return
    with contextlib.suppress(OSError):
        slot.handle.seek(0)
        slot.handle.truncate()
        saved = {"session_id": slot.session_id, "conf": slot.conf_keys, "artifacts": slot.artifacts}
        slot.handle.write(json.dumps(saved))
        slot.handle.flush()
