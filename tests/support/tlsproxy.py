"""A TLS endpoint in front of a Spark Connect server, as a team's ingress puts one.

Spark Connect's server speaks plain gRPC; a deployment that offers ``use_ssl=true``
terminates TLS in front of it (an ingress, a load balancer, a sidecar).  This proxy does
that with Python's own ``ssl`` and ``asyncio``: it accepts TLS (ALPN ``h2``, as gRPC
requires) with a certificate the caller gives, and pipes the bytes to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.CancelledError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.close()


def _serve(upstream: int, context: ssl.SSLContext, ready: threading.Event,
           box: dict[str, object]) -> None:  # fmt: skip
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
        stop = asyncio.Event()
        box["port"] = server.sockets[0].getsockname()[1]
        box["stop"] = lambda: loop.call_soon_threadsafe(stop.set)
        ready.set()
        async with server:
            await stop.wait()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


@contextlib.contextmanager
def tls_in_front(upstream: int, cert: Path, key: Path) -> Iterator[int]:
    """A TLS port on loopback, for the block, whose connections reach ``upstream``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    ready, box = threading.Event(), dict[str, object]()
    thread = threading.Thread(target=_serve, args=(upstream, context, ready, box), daemon=True)
    thread.start()
    assert ready.wait(30), "the TLS proxy did not start"
    try:
        port = box["port"]
        assert isinstance(port, int)
        yield port
    finally:
        stop = box["stop"]
        assert callable(stop)
        stop()
        thread.join(30)
