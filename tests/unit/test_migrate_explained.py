"""What ``migrate`` does, explained once (migcheck.runbook.online) for the groups' online
step, the app's online step and the groups' header: each text as the runbooks print it,
the barrier's quiet quoted from its one home (model/migrate.QUIET_S, 2 s).
"""

from __future__ import annotations

from migcheck.model.migrate import QUIET_S
from migcheck.runbook.online import Shadow, migrate_explained, migrate_in_brief

#: What both explanations say of the cut-over and of a stop.
_CUT_OVER = (
    "pause the producers, takes the barrier once the topic's ends stay quiet for 2 s, drains "
    "and checks the copy, "
)
_SWITCH = (
    "and asks you to switch the producers to orders-p6: the pause lasts seconds (a cut-over "
    "that takes longer reverts and is asked again). "
)
_STOP = (
    "Its MANUAL: lines ask on this terminal; its checkpoint lets a stopped run go on "
    "(docs/runbooks.md, Online)."
)


def test_the_barriers_quiet_is_two_seconds_where_the_runbooks_say_so() -> None:
    assert QUIET_S == 2.0


def test_the_groups_step_explains_the_copy_the_cut_over_and_the_moves() -> None:
    assert migrate_explained("orders", "orders-p6", "billing, audit") == (
        "migcheck migrate creates orders-p6 with orders's configs, copies orders into it and "
        "follows it while billing, audit go on reading. At the cut-over it asks you to "
        + _CUT_OVER
        + _SWITCH
        + "Then it moves each group to the new topic at the barrier's ends. "
        + _STOP
    )


def test_the_apps_step_explains_its_shadow_too() -> None:
    shadow = Shadow(6, "o1, o2", "SHADOW")
    assert migrate_explained("orders", "orders-p6", shadow) == (
        "migcheck migrate creates orders-p6 with orders's configs and each output's shadow "
        "(<output>-p6, for o1, o2), copies orders and follows it. It then asks you to start "
        "SHADOW: it reads orders-p6 from the start and rebuilds the app's state while the app "
        "keeps serving; nothing downstream reads its replay. Once the copy and the shadow are "
        "close behind, it asks you to "
        + _CUT_OVER
        + "waits for the shadow to reach lag 0 and records its outputs' ends, "
        + _SWITCH
        + "Then the app reads the old topic to the barrier, and each downstream group moves to "
        "the shadow's outputs at the recorded ends, each plain group to the new topic. " + _STOP
    )


def test_the_groups_header_says_it_in_one_clause() -> None:
    assert migrate_in_brief("orders-p6") == (
        "copy it into orders-p6 and follow it while they read (migcheck migrate), pause the "
        "producers for seconds at a barrier and switch them, then move each group to the new "
        "topic at the barrier's ends."
    )
