"""What every command is told about the cluster it reads and the Spark it runs on.

Declared once, so a new connection or Spark setting reaches every command, and
every command names it the same way (as Kafka's tools and spark-submit do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from migcheck.kafka.config import ClientConfig


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
    """``--master`` (None: embedded ``local[*]`` or spark-submit's) and ``--conf`` settings."""

    master: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
