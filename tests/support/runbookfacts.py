"""A Kafka Streams runbook's facts as the unit tests build them: the shop-counter app on a
3-partition ``orders`` widened to 6 through a new topic, with one changelog; each test
changes what it is about."""

from __future__ import annotations

from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts, StateMove, Strategy


def shop_facts(**changes: object) -> RunbookFacts:
    base: dict[str, object] = {
        "app_id": "shop-counter",
        "bootstrap": "broker-1:9092,broker-2:9092",
        "command_config": "/etc/kafka/client admin.properties",  # a space, quoted everywhere
        "topic": "orders",
        "partitions": 3,
        "to": 6,
        "new_topic": "orders-p6",
        "strategy": Strategy.NEW_TOPIC,
        "protocol": "classic",
        "internal": ("shop-counter-counts-changelog",),
        "expected_internal": {"shop-counter-counts-changelog": 6},
        "state_dir": "/var/lib/kafka-streams",
        "verdict": "CRASH",
        "configs": {"retention.ms": "-1"},
        "kind": ReaderKind.KAFKA_STREAMS,
    }
    return RunbookFacts(**{**base, **changes})  # type: ignore[arg-type]


def moved_facts(**changes: object) -> RunbookFacts:
    """The shop-counter app's state moved (``--strategy move-state``): orders altered in
    place, its one store's changelog copied into shop-counter-p6's, history trimmed."""
    base: dict[str, object] = {
        "strategy": Strategy.MOVE_STATE,
        "sources": ("orders",),
        "moved_app_id": "shop-counter-p6",
        "moves": (
            StateMove(
                "counts",
                "shop-counter-counts-changelog",
                "shop-counter-p6-counts-changelog",
                6,
                {"cleanup.policy": "compact"},
                1200,
            ),
        ),
        "expected_internal": {"shop-counter-p6-counts-changelog": 6},
        "history": 5000,
        "history_gone": 4000,
    }
    return shop_facts(**{**base, **changes})
