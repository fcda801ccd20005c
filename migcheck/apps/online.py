"""Whether a stateful app can move online: one decision, with each refusal written once,
for ``runbook --strategy online`` and ``migrate --application-id``.

Online, a shadow of the app rebuilds its state from the new topic while the app keeps
serving, and takes over at the barrier.  That is right only when the framework has a
shadow route (:attr:`~migcheck.frameworks.base.Framework.shadow`), every source of the
app still holds its whole history (:mod:`migcheck.model.history`; the shadow reprocesses
from the start, unless the loss was accepted), and the app's results do not depend on
stream time (:mod:`migcheck.apps.streamtime`).  Its outputs must be known: the shadow
writes each one's ``<output>-p<N>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from migcheck.apps.discovery import Discovery, lost_history
from migcheck.apps.streamtime import changelogs, refuse_stream_time
from migcheck.errors import Refused, UsageError
from migcheck.frameworks.topology import Topology, output_topics
from migcheck.model.history import lost_history_refusal
from migcheck.model.migrate import ShadowStart


def check_online(
    route: str,
    disc: Discovery,
    topology: Topology | None,
    accept_lost_history: bool,
    move_state: str = "",
) -> Callable[[ShadowStart], str]:
    """Refused in one line (``route``: the option that asked, as the line names it) where
    the app cannot move online; else its framework's shadow (the line that starts one).
    ``move_state``: the option that moves the app's state instead, where it can."""
    app, framework = disc.facts.app_id, disc.facts.framework
    if framework.shadow is None:
        raise UsageError(f"{route}: {app} is {framework.label}: {framework.online_refusal}")
    lost = lost_history(disc)
    if lost and not accept_lost_history:
        raise Refused(lost_history_refusal(app, lost, route, move_state))
    internal = changelogs(disc.facts.internal)
    policies = {t: disc.topics[t].cleanup_policy for t in internal if t in disc.topics}
    refuse_stream_time(route, app, policies, topology)
    return framework.shadow


def online_outputs(route: str, named: Sequence[str], topology: Topology | None) -> list[str]:
    """The app's output topics, which its shadow writes anew: ``named`` (``--output-topic``,
    ``''`` for none), else its topology's sinks; refused when neither says."""
    if named:
        return [o for o in dict.fromkeys(named) if o]
    if topology is None:
        raise UsageError(
            f"{route}: name the app's output topics with --output-topic (repeatable; "
            "--output-topic '' if it writes none) or give its --topology"
        )
    return output_topics(topology)
