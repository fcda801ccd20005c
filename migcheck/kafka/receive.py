"""kafka-python's receive path, with fewer copies of each fetched byte.

A reader spends about as much CPU receiving its fetch responses as decoding and
grouping their records.  kafka-python 3.0 (pinned below 3.1 in ``pyproject.toml``)
receives the socket 4 KiB at a time and joins the pieces, copies a slice of the joined
bytes into its frame buffer, and hands out a fetch's records as ``bytes`` of a
``bytearray`` slice: two more copies.  One process reading 1.67 M of bench-scan's
records with the driver's share's code (2026-11-26): py-spy found kafka-python's
network thread busy in 558 samples, most of them in those copies, and in 348 with
:func:`install`; four alternating runs took 3.45 to 3.79 CPU-seconds before, 2.94 to
3.14 after (the imports included).

:func:`install` (called by ``config.open_consumer``, so by every read: samples, full
scans, the copy and its check) replaces three small methods, class-wide (every consumer
of the process): the plain TCP transport receives up to 1 MiB a call (TLS keeps its own
transport's receive), the protocol parser slices a ``memoryview`` of what it received,
and a frame's reads over 256 bytes copy once, through a ``memoryview``.  The bytes and
their order are unchanged: the rest of kafka-python sees what it saw before.
"""

from __future__ import annotations

import logging
from typing import Any

#: Bytes one ``recv`` call may take: a fetch response of up to 8 MiB (``open_consumer``)
#: arrives in a few calls rather than two thousand.
RECV_BYTES = 1 << 20

#: A frame read this long or longer copies through a ``memoryview``; a shorter one (an
#: integer, a name) is cheaper sliced as before.
VIEW_READ_BYTES = 256

_log = logging.getLogger("kafka.net.transport")
_installed = False


def install() -> None:
    """Patch kafka-python's receive path in this process, once (see the module)."""
    global _installed
    if _installed:
        return
    from kafka.net.transport import KafkaTCPTransport
    from kafka.protocol.frame import KafkaBytes
    from kafka.protocol.parser import KafkaProtocol

    parse = KafkaProtocol.receive_bytes

    def receive_bytes(self: Any, data: bytes) -> Any:
        return parse(self, memoryview(data))  # its slices are views, not copies

    KafkaProtocol.receive_bytes = receive_bytes
    KafkaBytes.read = _frame_read
    KafkaTCPTransport._sock_recv = _sock_recv  # KafkaSSLTransport overrides it
    _installed = True


def _frame_read(self: Any, nbytes: int | None = None) -> bytes:
    """``KafkaBytes.read``: the next ``nbytes`` of the frame (all that is left when
    None), as ``bytes``, copied once."""
    start = self._idx
    end = len(self) if nbytes is None else min(start + nbytes, len(self))
    self._idx = end
    if end - start >= VIEW_READ_BYTES:
        return bytes(memoryview(self)[start:end])
    return bytes(self[start:end])


def _sock_recv(self: Any) -> tuple[bytes, Exception | None]:
    """``KafkaTCPTransport._sock_recv``: all the bytes the socket holds now, and the
    error that closes the connection if any, as kafka-python's own does."""
    from kafka.errors import KafkaConnectionError

    received: list[bytes] = []
    err = None
    while True:
        try:
            data = self._sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            break
        except BaseException as e:
            _log.exception("%s: Error receiving network data closing socket", self)
            err = KafkaConnectionError(e)
            break
        if not data:  # a disconnected socket reads empty, without an exception
            _log.error("%s: socket disconnected", self)
            err = KafkaConnectionError("socket disconnected")
            break
        received.append(data)
    return (received[0] if len(received) == 1 else b"".join(received)), err
