"""The app model's inputs as the unit tests build them for a Kafka Streams app: its
framework named, as discovery names it (no module below the CLI assumes one)."""

from __future__ import annotations

from functools import partial

from migcheck.apps.build import Facts
from migcheck.apps.rules import App
from migcheck.frameworks.kafka_streams import KAFKA_STREAMS

app_facts = partial(Facts, framework=KAFKA_STREAMS)
streams_app = partial(App, framework=KAFKA_STREAMS)
