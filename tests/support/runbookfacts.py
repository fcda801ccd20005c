"""A Kafka Streams runbook's facts as the unit tests build them: the shop-counter app on a
3-partition ``orders`` widened to 6 through a new topic, with one changelog; each test
changes what it is about."""

from __future__ import annotations

from migcheck.model.readers import ReaderKind
from migcheck.model.runbook import RunbookFacts, Strategy


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
