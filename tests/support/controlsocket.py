"""A client of ``migcheck migrate --control-socket``, as ``nc -U`` is one: one command a
connection, the reply's lines read until the run closes it."""

from __future__ import annotations

import socket
from pathlib import Path


def send(path: Path, line: str, timeout_s: float = 10.0) -> list[str]:
    """One command to the socket at ``path``: its reply's lines."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout_s)
        client.connect(str(path))
        client.sendall(f"{line}\n".encode())
        got = b""
        while chunk := client.recv(4096):
            got += chunk
    return got.decode().splitlines()
