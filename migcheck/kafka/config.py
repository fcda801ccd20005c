"""``--command-config``: Kafka client properties, translated for kafka-python, secrets hidden.

Kafka's own tools take a Java ``.properties`` file of client settings
(``security.protocol``, ``sasl.*``, ``ssl.*``); migcheck takes the same file so
an operator can reuse it.  Secrets live only in :class:`ClientConfig`'s options
and never in its ``repr`` or in an error message.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from migcheck.errors import ReadError

if TYPE_CHECKING:
    from kafka import KafkaAdminClient, KafkaConsumer

#: Kafka client properties whose values are secrets: never printed, never logged.
SECRET_PROPERTIES = frozenset(
    {
        "sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.certificates",
        "sasl.oauthbearer.token",
    }
)


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java ``.properties`` file as Kafka's ``--command-config`` files are written.

    Handles ``key=value`` and ``key: value``, ``#``/``!`` comments and backslash
    line continuations, which JAAS configs often use.
    """
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", logical)
        if match:
            props[match.group(1)] = match.group(2).strip()
        elif logical:
            props[logical] = ""
        logical = ""
    return props


def _jaas_option(jaas: str, name: str) -> str | None:
    match = re.search(rf'\b{name}\s*=\s*"((?:[^"\\]|\\.)*)"', jaas)
    return match.group(1) if match else None


def _sasl_options(props: dict[str, str]) -> dict[str, Any]:
    mechanism = props.get("sasl.mechanism", "GSSAPI").upper()
    opts: dict[str, Any] = {"sasl_mechanism": mechanism}
    if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        jaas = props.get("sasl.jaas.config", "")
        user = _jaas_option(jaas, "username")
        password = _jaas_option(jaas, "password")
        if user is None or password is None:
            raise ReadError(
                '--command-config: sasl.jaas.config needs username="..." and '
                'password="..." for ' + mechanism
            )
        opts["sasl_plain_username"] = user
        opts["sasl_plain_password"] = password
    elif mechanism == "GSSAPI":
        opts["sasl_kerberos_service_name"] = props.get("sasl.kerberos.service.name", "kafka")
    else:
        raise ReadError(f"--command-config: unsupported sasl.mechanism {mechanism!r}")
    return opts


def _ssl_options(props: dict[str, str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for kind, target in (("truststore", "ssl_cafile"), ("keystore", "ssl_certfile")):
        location = props.get(f"ssl.{kind}.location")
        if not location:
            continue
        if props.get(f"ssl.{kind}.type", "JKS").upper() != "PEM":
            raise ReadError(
                f"--command-config: ssl.{kind}.type must be PEM "
                "(JKS and PKCS12 stores are Java-only)"
            )
        opts[target] = location
        if kind == "keystore":
            opts["ssl_keyfile"] = props.get("ssl.key.location", location)
    if "ssl.key.password" in props:
        opts["ssl_password"] = props["ssl.key.password"]
    if props.get("ssl.endpoint.identification.algorithm", "https") == "":
        opts["ssl_check_hostname"] = False
    return opts


#: The consumer's fetch tuning a --command-config may set (Kafka's names -> kafka-python's):
#: a user who needs small fetches (a busy broker, a thin link) keeps them in every read.
CONSUMER_TUNING = {
    "max.partition.fetch.bytes": "max_partition_fetch_bytes",
    "fetch.max.bytes": "fetch_max_bytes",
    "fetch.min.bytes": "fetch_min_bytes",
    "fetch.max.wait.ms": "fetch_max_wait_ms",
    "max.poll.records": "max_poll_records",
    "receive.buffer.bytes": "receive_buffer_bytes",
}


def _consumer_tuning(props: dict[str, str]) -> dict[str, int]:
    try:
        return {CONSUMER_TUNING[k]: int(v) for k, v in props.items() if k in CONSUMER_TUNING}
    except ValueError:
        bad = next(k for k, v in props.items() if k in CONSUMER_TUNING and not v.isdigit())
        raise ReadError(f"--command-config: {bad} must be a whole number") from None


@dataclass(frozen=True)
class ClientConfig:
    """How to reach the cluster: bootstrap servers plus kafka-python security options.

    ``repr`` shows the bootstrap servers and option *names* only, so the object
    can appear in logs and tracebacks without leaking a password.
    """

    bootstrap_servers: str
    options: dict[str, Any] = field(default_factory=dict, repr=False)
    #: consumers only (:data:`CONSUMER_TUNING`): the admin client and producer refuse them
    consumer: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"ClientConfig({self.bootstrap_servers!r}, options={sorted(self.options)})"

    @classmethod
    def from_properties(cls, bootstrap_servers: str, props: dict[str, str]) -> ClientConfig:
        """Translate Kafka client properties (as Kafka's tools take them) to kafka-python."""
        protocol = props.get("security.protocol", "PLAINTEXT").upper()
        if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            raise ReadError(f"--command-config: unsupported security.protocol {protocol!r}")
        opts: dict[str, Any] = {"security_protocol": protocol}
        if protocol.startswith("SASL"):
            opts.update(_sasl_options(props))
        if protocol.endswith("SSL"):
            opts.update(_ssl_options(props))
        return cls(bootstrap_servers, opts, _consumer_tuning(props))

    @classmethod
    def load(cls, bootstrap_servers: str, command_config: str | None) -> ClientConfig:
        """The client for ``--bootstrap-server`` and the optional ``--command-config`` file."""
        if command_config is None:
            return cls(bootstrap_servers, {"security_protocol": "PLAINTEXT"})
        try:
            text = Path(command_config).read_text()
        except OSError as e:
            raise ReadError(f"--command-config {command_config}: {e.strerror}") from None
        return cls.from_properties(bootstrap_servers, parse_properties(text))

    def kafka_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for kafka-python's clients."""
        return {"bootstrap_servers": self.bootstrap_servers.split(","), **self.options}


def unknown_keys(props: dict[str, str]) -> list[str]:
    """The keys of ``props`` no Kafka client knows, in file order: Kafka's tools warn
    about them ("These configurations '...' were supplied but are not used yet.") and
    go on, so migcheck does too."""
    from migcheck.kafka.client_configs import KNOWN_CLIENT_CONFIGS

    return [key for key in props if key not in KNOWN_CLIENT_CONFIGS]


def command_config_warnings(command_config: str | None) -> list[str]:
    """Read and check ``--command-config`` before any work (a :class:`ReadError` for a
    file that cannot be used), and the warnings it deserves: one line per unknown key."""
    if command_config is None:
        return []
    try:
        props = parse_properties(Path(command_config).read_text())
    except OSError as e:
        raise ReadError(f"--command-config {command_config}: {e.strerror}") from None
    ClientConfig.from_properties("", props)  # the same checks the read will make
    return [
        f"--command-config: the configuration {key!r} was supplied but isn't a known config "
        "(ignored)"
        for key in unknown_keys(props)
    ]


def first_line(error: BaseException) -> str:
    """An exception as one printable line (Kafka errors can span several), without the
    class names kafka-python puts in its messages (:func:`_bare`): a user reads what
    happened, not which exception said so."""
    text = str(error).strip() or _words(type(error).__name__)
    return _named(text.splitlines()[0])


def _named(error: str) -> str:
    """kafka-python's error text with its class names as words, once: "[Error 30]
    GroupAuthorizationFailedError: denied" becomes "group authorization failed: denied"
    (the words carry the cause the broker's own message may leave out)."""
    match = re.match(r"(\[Error \d+\] )?((\w+?)(Error|Exception)(: ?|$))+", error)
    if not match:
        return error
    rest = error[match.end() :].strip()
    words = _words(match.group(3) + match.group(4))
    return f"{words}: {rest}" if rest else words


def _words(class_name: str) -> str:
    """A class name as words, for an exception with no message: "KafkaTimeoutError"
    becomes "kafka timeout"."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", class_name)
    return " ".join(w.lower() for w in words if w not in ("Error", "Exception")) or "failed"


#: How long a client may take to reach the cluster: past it, "cannot reach Kafka".  Short
#: enough that a wrong address or password fails in seconds, not after 30 s of retries.
BOOTSTRAP_TIMEOUT_MS = 8_000


class _AuthFailures(logging.Handler):
    """Collects kafka-python's authentication and authorization failures, which it logs
    and retries until the bootstrap times out, so the error can name the real cause."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []
        self.dropped = False  # a connection was made, then closed by the broker

    def emit(self, record: logging.LogRecord) -> None:
        text = " ".join(str(a) for a in (record.args or ()) if isinstance(a, BaseException))
        text = text or record.getMessage()
        if re.search(r"(?i)authenticat|authoriz|sasl", text):
            self.seen.append(text.splitlines()[0])
        elif "socket disconnected" in text:
            self.dropped = True


def _bare(error: str) -> str:
    """kafka-python's error text without its class names: "[Error 58]
    SaslAuthenticationFailedError: SaslAuthenticationFailedError: Authentication failed"
    becomes "Authentication failed"."""
    return re.sub(r"^(\[Error \d+\] )?(\w+(Error|Exception): ?)*", "", error).strip() or error


def _cause(refusal: str) -> str:
    """The broker's refusal without the words the line starts with already: Kafka's
    "Authentication failed during authentication due to invalid credentials with SASL
    mechanism SCRAM-SHA-512" says "authentication failed" once, as "invalid credentials
    with SASL mechanism SCRAM-SHA-512"."""
    text = _bare(refusal)
    return (
        re.sub(r"(?i)^authentication failed( during authentication)?( due to)?:? *", "", text)
        or text
    )


@contextlib.contextmanager
def _reaching(client: ClientConfig) -> Iterator[None]:
    """Turn a client's failure to bootstrap into one line that names the cause.  Every
    client receives with fewer copies and stops at a refused login (hooks 1 to 3 and 7
    of :mod:`~migcheck.kafka.private_hooks`, on the clients built with
    :func:`~migcheck.kafka.private_hooks.lean_client`): hook 1 also keeps a broker's last
    answer before its close, the SASL refusal that names a wrong password.  Before all that,
    :func:`~migcheck.kafka.listener.check_listeners` asks the addresses themselves, so a
    refused connection, a name that does not resolve and a SASL or TLS listener met
    without ``--command-config`` fail at once, each saying what to fix."""
    from kafka.errors import KafkaError

    from migcheck.kafka.listener import check_listeners

    check_listeners(client.bootstrap_servers, client.options.get("security_protocol", ""))
    failures = _AuthFailures()
    logger = logging.getLogger("kafka")
    logger.addHandler(failures)
    try:
        yield
    except KafkaError as e:
        where = client.bootstrap_servers
        if failures.seen:
            raise ReadError(
                f"authentication failed at {where}: {_cause(failures.seen[-1])} "
                "(check the credentials in --command-config)"
            ) from None
        if failures.dropped and client.options.get("security_protocol", "").startswith("SASL"):
            # Kafka closes the connection after a failed SASL exchange, at times before
            # the client has read the error it sent.
            raise ReadError(
                f"authentication failed at {where}: the broker closed the connection "
                "during SASL authentication (check the credentials in --command-config)"
            ) from None
        raise ReadError(f"cannot reach Kafka at {where}: {first_line(e)}") from None
    finally:
        logger.removeHandler(failures)


#: How long a broker may hold a fetch that found no new data.  migcheck reads only
#: ranges that exist, so the one fetch that waits is the prefetch past a range's end
#: (at the log end); with Kafka's default of 500 ms each such fetch stalled the next
#: read on that broker: half a full scan's read was spent waiting (docs/benchmarks.md).
#: Not 0: a range that cannot finish (an open transaction) polls the broker 100 times a
#: second at most, never in a busy loop.
FETCH_MAX_WAIT_MS = 10

#: A consumer's wait before it retries a failed request or refreshes its metadata again
#: (Kafka's default is 100 ms).  The refresh that follows the bootstrap's, the first to
#: name a topic, waits for it (hook 8 of :mod:`~migcheck.kafka.private_hooks`): 100 ms of
#: every command's metadata.  A read-only client retrying a little sooner costs the
#: broker nothing worth the wait.
RETRY_BACKOFF_MS = 20


def consumer_options(
    client: ClientConfig, fail_on_deleted: bool = False, **extra: object
) -> dict[str, object]:
    """Every option of :func:`open_consumer`'s consumer (kafka-python's names).

    ``fail_on_deleted`` (a full scan): a fetch below the log start raises
    ``OffsetOutOfRangeError`` instead of moving on to the earliest offset, which would skip
    records deleted under the read (retention, ``kafka-delete-records``) without a word.
    kafka-python's documented ``auto_offset_reset``: 'earliest' moves to the oldest
    record, "any other value will raise the exception" ('none', as Kafka's own).
    """
    tunable = {
        "request_timeout_ms": 30_000,
        "bootstrap_timeout_ms": BOOTSTRAP_TIMEOUT_MS,
        "max_partition_fetch_bytes": 8 * 1024 * 1024,
        "fetch_max_wait_ms": FETCH_MAX_WAIT_MS,
        "retry_backoff_ms": RETRY_BACKOFF_MS,
        "client_id": "migcheck",
    }
    return {
        **tunable,
        **extra,
        **client.consumer,  # the user's tuning wins
        **client.kafka_kwargs(),
        # last, so nothing can override them: no group, no commits, committed data
        "group_id": None,
        "enable_auto_commit": False,
        "isolation_level": "read_committed",
        "auto_offset_reset": "none" if fail_on_deleted else "earliest",
    }


def open_consumer(
    client: ClientConfig, fail_on_deleted: bool = False, **extra: object
) -> KafkaConsumer:
    """A consumer that cannot write: no group, no commits, committed reads only
    (:func:`consumer_options`)."""
    from kafka import KafkaConsumer

    from migcheck.kafka.private_hooks import honour_retry_backoff, lean_client

    with _reaching(client):
        consumer = KafkaConsumer(
            **consumer_options(client, fail_on_deleted, **extra), kafka_client=lean_client
        )
    honour_retry_backoff(consumer)
    return consumer


def open_admin(client: ClientConfig) -> KafkaAdminClient:
    """An admin client for describe and list requests only; migcheck never alters a cluster."""
    from kafka import KafkaAdminClient

    from migcheck.kafka.private_hooks import lean_client

    with _reaching(client):
        return KafkaAdminClient(
            kafka_client=lean_client,
            client_id="migcheck",
            request_timeout_ms=30_000,
            bootstrap_timeout_ms=BOOTSTRAP_TIMEOUT_MS,
            **client.kafka_kwargs(),
        )
