"""What every command is told about the cluster it reads and the Spark it runs on.

Declared once, so a new connection or Spark setting reaches every command, and
every command names it the same way (as Kafka's tools and spark-submit do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from migcheck.analysis.remote import Remote, check_url
from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig

__all__ = ["Connection", "Remote", "SparkSettings"]


@dataclass(frozen=True)
class Connection:
    """``--bootstrap-server`` and ``--command-config`` (None when not given)."""

    bootstrap: str | None = None
    command_config: str | None = None

    def client(self) -> ClientConfig:
        """The client settings: the properties file read and checked, secrets kept hidden."""
        return ClientConfig.load(self.bootstrap or "", self.command_config)


@dataclass(frozen=True)
class SparkSettings:
    """``--master`` (None: embedded ``local[*]`` or spark-submit's), ``--conf`` settings,
    and ``--remote`` (a Spark Connect server, instead of a master)."""

    master: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    remote: Remote | None = None

    def __post_init__(self) -> None:
        """A Spark Connect server runs its own master: one of the two, and its URL checked
        before anything is read."""
        if self.remote is None:
            return
        if self.master is not None or "spark.master" in self.conf:
            raise UsageError(
                "give --master or --remote, not both: a Spark Connect server runs on the "
                "master it was started with"
            )
        check_url(self.remote.url)
