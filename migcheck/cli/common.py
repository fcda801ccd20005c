"""What several commands share: option definitions, value parsing and report output."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import click
from click.core import ParameterSource

from migcheck.commands.options import Connection, Remote, SparkSettings
from migcheck.errors import UsageError
from migcheck.files import write_atomically
from migcheck.frameworks.registry import AUTO_FRAMEWORK, FRAMEWORKS
from migcheck.kafka.config import command_config_warnings
from migcheck.model.history import ACCEPT_LOST_HISTORY
from migcheck.model.migrate import CUTOVER_TIMEOUT_S
from migcheck.model.partitioner import PartitionerChoice
from migcheck.model.topics import MAX_PARTITIONS, check_partition_count
from migcheck.report import FORMATS, OUTPUTS
from migcheck.report.registry import Output

PARTITION_COUNT = click.IntRange(1, MAX_PARTITIONS)


def writable_output(ctx: click.Context, param: click.Parameter, path: str | None) -> str | None:
    """``--output`` checked before any read: its directory must exist and take a new file
    (the report is written beside it, then renamed over it), and it must not be a
    directory.  Else a whole read would end in "No such file or directory"."""
    if path is None:
        return None
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise UsageError(f"--output {path} is a directory, not a file")
    if not folder.is_dir():
        raise UsageError(f"--output {path}: its directory {folder} does not exist")
    probe = folder / f".{target.name}.migcheck-{os.getpid()}"
    try:
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError:
        raise UsageError(f"--output {path} is not writable: {folder} takes no new file") from None
    return path


def _full_or_sample(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--full`` reads every record, so a ``--sample-per-partition`` given with it would
    be dropped without a word: refuse the two together, whichever Click parses second."""
    if ctx.get_parameter_source(param.name or "") == click.core.ParameterSource.COMMANDLINE:
        given = ctx.meta.setdefault("migcheck.full_or_sample", set())
        given.add(param.name)
        if len(given) == 2:
            raise UsageError(
                "--full reads every record, --sample-per-partition a sample: give one, not both"
            )
    return value


def format_option(choices: Sequence[str], help: str) -> Any:
    """``--format`` (as ``fmt``) among ``choices``, the first the default."""
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default=choices[0],
        show_default=True, help=help,
    )  # fmt: skip


#: Options every report-writing command shares.
report_format_option = format_option(
    FORMATS,
    "text for a terminal, json for machines, markdown for a change ticket, "
    "html for a browser (one self-contained file).",
)
output_option = click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    callback=writable_output,
    help="Write the report here instead of stdout.",
)


#: Options every command that reads Kafka shares, named as Kafka's own tools name them.
def bootstrap_server_option(
    help: str = "The Kafka cluster to read (read-only: no group, no commits).",
) -> Any:
    """``--bootstrap-server``; a command that writes (``copy``) says so in its own help."""
    return click.option("--bootstrap-server", "bootstrap", metavar="HOST:PORT", help=help)


bootstrap_option = bootstrap_server_option()
command_config_option = click.option(
    "--command-config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kafka client properties (security.protocol, sasl.*, ssl.*), as for Kafka's tools.",
)
topic_option = click.option(
    "--topic", "topics", multiple=True, metavar="TOPIC", help="A topic to analyze (repeatable)."
)
to_option = click.option(
    "--to",
    "to",
    multiple=True,
    required=True,
    metavar="N[,M...]",
    help="Proposed partition count(s), compared side by side.",
)
full_option = click.option(
    "--full", is_flag=True, callback=_full_or_sample, help="Read every record instead of a sample."
)
sample_option = click.option(
    "--sample-per-partition",
    type=click.IntRange(1),
    default=20_000,
    show_default=True,
    callback=_full_or_sample,
    help="Records to read per partition, in windows spread over its offsets.",
)


def partitioner_choices(auto: bool = True) -> click.Choice:
    """``--partitioner``'s choices, the enum's values (Click would offer an enum's member
    names); ``auto`` where the command detects the partitioner."""
    offered = [c for c in PartitionerChoice if auto or c != PartitionerChoice.AUTO]
    return click.Choice([c.value for c in offered])


def partitioner_member(ctx: click.Context, param: click.Parameter, value: str) -> PartitionerChoice:
    """The chosen value as its member: the commands take a :class:`PartitionerChoice`."""
    return PartitionerChoice(value)


partitioner_option = click.option(
    "--partitioner",
    type=partitioner_choices(),
    default=PartitionerChoice.AUTO.value,
    show_default=True,
    callback=partitioner_member,
    help="The producers' partitioner; auto picks the one that placed every key.",
)
cutover_timeout_option = click.option(
    "--cutover-timeout",
    type=float,
    default=CUTOVER_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="A cut-over not done within this (the barrier, the drain, the check and an app "
    "shadow's lag 0) reverts: the producers resume on the old topic.",
)

#: ``runbook`` and ``migrate``: a reprocess of sources that lost records, accepted by name.
accept_lost_history_option = click.option(
    ACCEPT_LOST_HISTORY,
    "accept_lost_history",
    is_flag=True,
    help="Rebuild the app's state by reprocessing even though a source no longer holds its "
    "whole history (a log start offset above 0): the state then misses what retention "
    "deleted.  Refused without it.",
)


#: Options of the commands that read a Kafka Streams application.
def application_id_option(
    required: bool = True, help: str = "The app's application.id.", several: bool = False
):
    """``--application-id``: the group id and internal-topic prefix, as StreamsResetter
    names it; ``several``: repeatable (``app_ids``), every app of the change."""
    name = "app_ids" if several else "app_id"
    return click.option(
        "--application-id", name, required=required, multiple=several, metavar="ID", help=help
    )


def topics_option(help: str):
    """``--topic`` repeatable: a set of topics widened in one change (issue 71)."""
    return click.option(
        "--topic", "topics", required=True, multiple=True, metavar="TOPIC", help=help
    )


def topology_option(
    help: str = "The text Topology#describe() prints; without it the topology is inferred.",
    several: bool = False,
):
    """``--topology``: a file holding the text ``Topology#describe()`` prints; ``several``:
    repeatable (``topology_files``), ``APP_ID=FILE`` for each of several apps
    (:func:`topologies_of`)."""
    if several:
        return click.option(
            "--topology", "topology_files", multiple=True, metavar="[APP_ID=]FILE", help=help
        )
    return click.option(
        "--topology", "topology_file", type=click.Path(dir_okay=False), default=None, help=help
    )


def topologies_of(values: tuple[str, ...], app_ids: tuple[str, ...]) -> dict[str, str]:
    """Each app's --topology file, by app id: ``APP_ID=FILE``, or ``FILE`` alone when one
    app moves (a path that holds ``=`` then reads whole)."""
    apps = tuple(dict.fromkeys(app_ids)) or ("",)  # none: refused once the options are read
    if len(apps) == 1 and len(values) == 1 and not values[0].startswith(f"{apps[0]}="):
        return {apps[0]: values[0]}
    return id_file_pairs(values, "--topology")


fixed_repartition_option = click.option(
    "--fixed-repartition",
    multiple=True,
    metavar="NAME",
    help="A repartition topic (name as in the topology) the app sized with "
    "Repartitioned.withNumberOfPartitions (repeatable).",
)

#: Options of the commands that run Spark.
#: Groups the user vouches are plain consumer groups (``readers``, ``gate``).
plain_groups_option = click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="GROUP",
    help="A group you know is a plain consumer group (repeatable): an idle one the "
    "evidence cannot tell apart is then judged as one.",
)
framework_option = click.option(
    "--framework",
    type=click.Choice([AUTO_FRAMEWORK, *(kind.value for kind in FRAMEWORKS)]),
    default=AUTO_FRAMEWORK,
    show_default=True,
    help="The stream processor, when its group cannot tell (a stopped Quix Streams app "
    "without changelogs looks like any consumer group).",
)
_master = click.option(
    "--master", default=None, help="Spark master URL (default: embedded local[*])."
)
_remote = click.option(
    "--remote",
    default=None,
    envvar="MIGCHECK_REMOTE",
    show_envvar=True,
    metavar="sc://HOST:PORT",
    help="Run on this Spark Connect server instead of a master (migcheck server start "
    "runs one here); its token and TLS go in --remote-config.  From the environment, "
    "--master and a running Spark session win over it.",
)
_remote_config = click.option(
    "--remote-config",
    type=click.Path(dir_okay=False),
    default=None,
    envvar="MIGCHECK_REMOTE_CONFIG",
    show_envvar=True,
    metavar="FILE",
    help="Properties file of --remote's token= and use_ssl=, never given on the command line.",
)
_conf = click.option(
    "--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark setting (repeatable)."
)


def spark_options(command: Any) -> Any:
    """The options of every command that runs Spark: ``--master``, ``--remote``,
    ``--remote-config`` and ``--conf`` (:func:`spark_of` makes them one setting)."""
    for option in (_conf, _remote_config, _remote, _master):
        command = option(command)
    return command


def deprecated_option(old: str, new: str, dest: str, **attrs: Any) -> Any:
    """The old spelling of an option, kept for one release so that scripts written for it
    still run: hidden from ``--help``, and when given it says on stderr, in one line, which
    spelling replaces it.  Its value goes to ``dest``; :func:`renamed` merges it with the
    new option's."""

    def warn(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value not in (None, ()):
            click.echo(
                f"migcheck: {old} is deprecated and goes in the next release; use {new}",
                err=True,
            )
        return value

    return click.option(old, dest, hidden=True, callback=warn, **attrs)


def renamed(new_value: Any, old_value: Any, new: str, old: str) -> Any:
    """An option's value under its new spelling or its deprecated one, never both."""
    if old_value in (None, ()):
        return new_value
    if new_value not in (None, ()):
        raise UsageError(f"{old} is the old spelling of {new}: give only {new}")
    return old_value


def parse_counts(values: tuple[str, ...], option: str = "--to") -> list[int]:
    """``--to 8,12 --to 16`` -> [8, 12, 16], each a valid Kafka partition count, once."""
    counts: list[int] = []
    for value in values:
        for part in value.split(","):
            try:
                n = int(part.strip())
            except ValueError:
                raise UsageError(f"{option} {part.strip()!r} is not a partition count") from None
            try:
                check_partition_count(n)
            except ValueError:
                raise UsageError(f"{option} {n} is out of range (1 to {MAX_PARTITIONS})") from None
            if n not in counts:
                counts.append(n)
    if not counts:
        raise UsageError(f"{option} needs at least one partition count")
    return counts


def parse_topic_counts(values: tuple[str, ...], option: str) -> dict[str, int]:
    """``--to orders=12 --to payments=12`` -> {"orders": 12, "payments": 12}."""
    counts: dict[str, int] = {}
    for value in values:
        topic, sep, n = value.rpartition("=")
        if not sep or not topic.strip():
            raise UsageError(f"{option} {value!r} is not TOPIC=N")
        (counts[topic.strip()],) = parse_counts((n,), f"{option} {topic.strip()}=")
    return counts


def parse_conf(values: tuple[str, ...]) -> dict[str, str]:
    """``--conf key=value`` settings as a dict."""
    conf: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {value!r} is not key=value")
        conf[key.strip()] = val.strip()
    return conf


def connection_of(
    bootstrap: str | None, command_config: str | None, required: bool = True
) -> Connection:
    """``--bootstrap-server`` and ``--command-config`` as one :class:`Connection`; a
    command that must read Kafka refuses a missing ``--bootstrap-server`` here, in one
    line, before anything runs."""
    if required and not bootstrap:
        raise UsageError("--bootstrap-server is required")
    for line in command_config_warnings(command_config):
        click.echo(f"migcheck: warning: {line}", err=True)
    return Connection(bootstrap, command_config)


def spark_of(
    master: str | None, conf: tuple[str, ...], remote: str | None, remote_config: str | None
) -> SparkSettings:
    """``--master``, ``--conf``, ``--remote`` and ``--remote-config`` as one
    :class:`SparkSettings`, checked (one line for what cannot go together)."""
    settings = parse_conf(conf)
    implied = _from_environment("remote")
    if implied and (master is not None or "spark.master" in settings):
        remote = None  # a master given on the command line wins over the environment's server
    if remote is None and remote_config is not None and not _from_environment("remote_config"):
        raise UsageError("--remote-config goes with --remote: it holds that server's token")
    where = None if remote is None else Remote(remote, remote_config, implied)
    return SparkSettings(master, settings, where)


def _from_environment(param: str) -> bool:
    """Whether the running command's ``param`` came from its environment variable."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.get_parameter_source(param) is ParameterSource.ENVIRONMENT


def write_text(text: str, output: str | None) -> None:
    """Write a report to ``output`` (saying where on stderr) or to stdout.

    Atomically: into a temporary file beside the target, then renamed over it, so
    a failure (a full disk, Ctrl-C) never leaves a file that looks complete.
    """
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_atomically(output, text)
    except OSError as e:
        raise UsageError(f"--output {output}: {e.strerror}") from None
    click.echo(f"migcheck: report written to {output}", err=True)


def say_why(lines: list[str]) -> None:
    """Why the command exits non-zero, one line each on stderr, whatever the format and
    wherever the report went (``--output``); the lines come escaped from ``report/why.py``."""
    for line in lines:
        click.echo(f"migcheck: {line}", err=True)


class Outcome(Protocol):
    """What a command returns (``commands/outcome.py``, or analyze's own of that shape)."""

    @property
    def report(self) -> Any: ...

    @property
    def exit_code(self) -> int: ...


def command_output() -> Output:
    """The running command's entry in the output registry (``report/registry.py``): the
    command's name is its key, and a unit test holds every command to having one."""
    return OUTPUTS[click.get_current_context().command.name or ""]


def write_outcome(outcome: Outcome, fmt: str, output: str | None) -> int:
    """Render a command's result in ``fmt`` through its registry entry, write it to
    ``output`` or stdout, say on stderr why it exits non-zero; its exit code."""
    entry = command_output()
    write_text(entry.formats[fmt](outcome.report), output)
    say_why(entry.why(outcome.report))
    return outcome.exit_code


def id_file_pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    """``ID=FILE`` pairs (``--topology APP_ID=FILE``: the gate's, and migrate's of several
    apps); a value without ``=`` is one line of bad input."""
    pairs = {}
    for value in values:
        key, sep, path = value.partition("=")
        if not sep or not key or not path:
            raise UsageError(f"{option} {value!r}: expected APP_ID=FILE")
        pairs[key] = path
    return pairs
