"""One plain consumer-group member, as its own process: prints ``partition offset value``
per record it reads until SIGTERM, then closes the consumer (leaving the group).

tests/integration/test_runbook_groups.py runs one per group.  Each in its own process: two
kafka-python consumers in one process share its interpreter, and a busy one's fetches
starved the other's heartbeats on CI's two cores until it never joined its group.

Usage: python ordered_reader.py BOOTSTRAP TOPIC GROUP small|plain
"""

from __future__ import annotations

import signal
import sys
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer


class _Logged(ConsumerRebalanceListener):
    """Each revoke and assignment of the member, timed, on stderr."""

    def __init__(self, group: str) -> None:
        self.group = group

    def _say(self, what: str, partitions: object) -> None:
        print(f"{time.strftime('%H:%M:%S')} {self.group} {what} {partitions}", file=sys.stderr)

    def on_partitions_revoked(self, revoked: object) -> None:
        self._say("revoked", revoked)

    def on_partitions_assigned(self, assigned: object) -> None:
        self._say("assigned", assigned)


def main(bootstrap: str, topic: str, group: str, kind: str) -> None:
    small = kind == "small"
    fetch = {"max_partition_fetch_bytes": 300, "max_poll_records": 5} if small else {}
    pause = 0.01 if small else 0.0  # at most 500 records/s: it lags under load
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        metadata_max_age_ms=1000,
        auto_commit_interval_ms=200,
        fetch_max_wait_ms=50,
        **fetch,
    )
    # Each assignment on stderr, timed: a failed run shows when the member got (or never
    # got) the partitions the alter added.
    consumer.subscribe([topic], listener=_Logged(group))
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    try:
        while not stopping:
            for records in consumer.poll(timeout_ms=100).values():
                lines = (f"{r.partition} {r.offset} {r.value.decode()}\n" for r in records)
                sys.stdout.write("".join(lines))
            sys.stdout.flush()
            time.sleep(pause)
    finally:
        consumer.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
