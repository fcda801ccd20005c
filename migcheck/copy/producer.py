"""The one place migcheck writes to a cluster: ``migcheck copy``'s transactional producer.

Every other module reads.  The copy writes each chunk of a source partition in
one transaction under a stable ``transactional.id`` per (source topic,
destination topic, source partition): a restarted copy fences the one that
died, Kafka aborts its open transaction, and the destination's committed
records are exactly the chunks that committed (see :mod:`migcheck.copy.task`).

The producer is librdkafka's (the ``confluent-kafka`` package), built for this path:
330,000 records in one transaction took 1.07 s against kafka-python's 5.55 s
(docs/benchmarks.md, "The copy's producer").  kafka-python still does every read.
librdkafka cannot write a timestamp of 0 or less (0 means "now" to it): a chunk
holding one goes through kafka-python's producer, as released, so that every
timestamp is kept (:func:`librdkafka_writes`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from migcheck.errors import ReadError
from migcheck.kafka.config import ClientConfig, first_line
from migcheck.kafka.recordbatch import Fields

#: kafka-python's security options (what :class:`ClientConfig` holds) as librdkafka
#: names them; an option missing here is refused, never dropped.
LIBRDKAFKA_NAMES = {
    "security_protocol": "security.protocol",
    "sasl_mechanism": "sasl.mechanism",
    "sasl_plain_username": "sasl.username",
    "sasl_plain_password": "sasl.password",
    "sasl_kerberos_service_name": "sasl.kerberos.service.name",
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
    "ssl_password": "ssl.key.password",
}

_LIBRDKAFKA_LOG = logging.getLogger("migcheck.copy.librdkafka")

#: How long librdkafka may take to fence a predecessor and to commit (its default
#: ``transaction.timeout.ms`` is 60 s).
TRANSACTION_TIMEOUT_S = 60.0


class Record(Protocol):
    """What the copy writes of a source record (a kafka-python ``ConsumerRecord``)."""

    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def headers(self) -> Sequence[tuple[str, bytes | None]] | None: ...


def transactional_id(topic: str, into: str, partition: int) -> str:
    """Stable across runs, so that a re-run fences and resolves the last one's transaction."""
    return f"migcheck-copy-{topic}-{into}-{partition}"


def librdkafka_config(client: ClientConfig, txn_id: str) -> dict[str, Any]:
    """The transactional producer's librdkafka settings: ``client``'s security, translated.

    Pure.  An option librdkafka has no name for here is refused in one line, so that no
    security setting is silently lost on the write path.
    """
    config: dict[str, Any] = {
        "bootstrap.servers": client.bootstrap_servers,
        "transactional.id": txn_id,
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
        "client.id": "migcheck-copy",
        # every task of every round initialises its id: 20 ms, not 100, between retries
        "retry.backoff.ms": 20,
        # and connects at once to every broker: with sparse connections, librdkafka drops
        # the bootstrap connection, then waits out a connection suppression (about 50 ms)
        # or its producer-id timer (500 ms, one time in three) before it asks for an id
        "enable.sparse.connections": False,
    }
    for name, value in client.options.items():
        if name == "ssl_check_hostname":
            if not value:
                config["ssl.endpoint.identification.algorithm"] = "none"
        elif name in LIBRDKAFKA_NAMES:
            config[LIBRDKAFKA_NAMES[name]] = value
        else:
            raise ReadError(f"--command-config: the copy's producer cannot take {name!r}")
    return config


def librdkafka_writes(timestamps: Iterable[int]) -> bool:
    """Whether librdkafka can write records of these timestamps as they are: it takes 0
    for "now" and refuses a negative one, which kafka-python writes unchanged."""
    return all(t > 0 for t in timestamps)


def kafka_python_writes(records: Iterable[Record]) -> bool:
    """Whether kafka-python's producer can write these records: it refuses a header with a
    null value and a record with neither key nor value, which librdkafka writes."""
    return all(
        (r.key is not None or r.value is not None)
        and all(value is not None for _, value in r.headers or ())
        for r in records
    )


def open_transactional_producer(client: ClientConfig, txn_id: str) -> Any:
    """librdkafka's idempotent, transactional producer, initialised (its predecessor
    fenced, the transaction it left open finished or aborted)."""
    from confluent_kafka import KafkaException, Producer

    try:
        # librdkafka's own log lines (a coordinator still loading: "retrying") go to
        # Python's logging, not to stderr: in the driver, a follow's, they would reach the
        # operator's terminal between migcheck's lines
        producer = Producer({**librdkafka_config(client, txn_id), "logger": _LIBRDKAFKA_LOG})
        producer.init_transactions(TRANSACTION_TIMEOUT_S)
        return producer
    except KafkaException as e:
        raise _cannot_open(client, _said(e)) from None


class Producers:
    """The transactional producers a follow's driver keeps open between the small rounds
    it settles itself (:func:`migcheck.copy.task.launch_in_driver`), one per id, each
    initialised once: its first initialisation fenced and resolved whatever an earlier
    attempt left, and every transaction it began since ended before the next began.  One
    whose transaction failed, or that another producer of its id fenced (a Spark round's
    task, kafka-python's producer for an old timestamp), is forgotten and initialised
    again on its next use."""

    def __init__(self, client: ClientConfig) -> None:
        self.client = client
        self.open: dict[str, Any] = {}

    def get(self, txn_id: str) -> Any:
        if txn_id not in self.open:
            self.open[txn_id] = open_transactional_producer(self.client, txn_id)
        return self.open[txn_id]

    def forget(self, txn_id: str) -> None:
        self.open.pop(txn_id, None)

    def clear(self) -> None:
        self.open.clear()


def write_transaction(
    producer: Any, topic: str, records: Iterable[Fields], placed: Sequence[int]
) -> None:
    """``records`` (each one's fields: :meth:`~migcheck.kafka.recordbatch.WholeChunk.fields`)
    into ``topic``, each on its partition in ``placed``, in one transaction: all of them
    commit, or none."""
    producer.begin_transaction()
    produce, poll = producer.produce, producer.poll
    for (value, key, timestamp, headers), q in zip(records, placed, strict=True):
        while True:
            try:
                produce(topic, value, key, q, timestamp=timestamp, headers=headers)
                break
            except BufferError:  # librdkafka's queue is full: let it drain
                poll(0.05)
    producer.commit_transaction(TRANSACTION_TIMEOUT_S)


def open_released_producer(client: ClientConfig, txn_id: str) -> Any:
    """kafka-python's transactional producer, as released, initialised: for timestamps
    librdkafka cannot write (:func:`librdkafka_writes`).  Its ``init_transactions``
    fences the librdkafka producer of the same id."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    try:
        producer: Any = KafkaProducer(
            transactional_id=txn_id, enable_idempotence=True, acks="all",
            client_id="migcheck-copy", **client.kafka_kwargs(),
        )  # fmt: skip
        producer.init_transactions()
        return producer
    except KafkaError as e:
        raise _cannot_open(client, first_line(e)) from None


def write_transaction_released(
    producer: Any, topic: str, records: Sequence[Record], placed: Sequence[int]
) -> None:
    """:func:`write_transaction` through :func:`open_released_producer`'s producer."""
    producer.begin_transaction()
    for r, q in zip(records, placed, strict=True):
        producer.send(topic, key=r.key, value=r.value, partition=q,
                      timestamp_ms=r.timestamp, headers=list(r.headers or []))  # fmt: skip
    producer.commit_transaction()


def _cannot_open(client: ClientConfig, why: str) -> ReadError:
    return ReadError(f"cannot open a producer at {client.bootstrap_servers}: {why}")


def _said(error: Exception) -> str:
    """librdkafka's own words for a failure (its KafkaError's ``str()``), one line."""
    inner = error.args[0] if error.args else error
    text = inner.str() if hasattr(inner, "str") else str(inner)
    return text.splitlines()[0] if text else type(error).__name__
