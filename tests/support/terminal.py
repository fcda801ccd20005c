"""A command run as a user at a shell runs it: on a pseudo-terminal, where progress bars
are drawn."""

from __future__ import annotations

import contextlib
import os
import pty
import subprocess


def on_a_terminal(
    argv: list[str], timeout: float = 300, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run ``argv`` (in ``env``, else this process's environment) with its stdout and
    stderr on a pseudo-terminal, as a user at a shell does: its exit code and everything
    it drew there."""
    main, child = pty.openpty()
    env = {**(os.environ if env is None else env), "TERM": "xterm-256color"}  # live bars
    proc = subprocess.Popen(argv, stdout=child, stderr=child, stdin=subprocess.DEVNULL, env=env)
    os.close(child)
    drawn = bytearray()
    with contextlib.suppress(OSError):  # EIO once the child's side closes
        while chunk := os.read(main, 65536):
            drawn += chunk
    os.close(main)
    return proc.wait(timeout=timeout), drawn.decode(errors="replace")
