"""``migcheck server``'s answer: where the server runs, and how a check reaches it."""

from __future__ import annotations

from migcheck.model.server import ConnectServer, ServerState
from migcheck.untrusted import visible

#: What each state says, before the details.
STATE_WORDS = {
    ServerState.STARTED: "started",
    ServerState.RUNNING: "running",
    ServerState.STOPPED: "stopped",
    ServerState.NONE: "no Spark Connect server of migcheck's runs on this machine",
}


def render_server_text(server: ConnectServer) -> str:
    if server.url is None:
        return f"migcheck server: {STATE_WORDS[server.state]}\n"
    took = f", {server.seconds:.1f} s" if server.seconds else ""
    lines = [
        f"migcheck server: {STATE_WORDS[server.state]} at {visible(server.url)} "
        f"(pid {server.pid}, master {visible(server.master or '')}{took})",
        f"  its log:  {visible(server.log or '')}",
    ]
    if server.state is not ServerState.STOPPED:
        lines += [
            f"  checks:   add --remote {visible(server.url)} (they start no JVM of their own)",
            "  stop it:  migcheck server stop (it runs until then)",
        ]
    return "\n".join(lines) + "\n"
