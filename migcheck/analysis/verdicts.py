"""Decisions: which partitioner placed the keys, what a topic's verdict is, and the gate.

Pure functions over plain numbers, so each rule is tested on its own, without
Kafka or Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from migcheck.model.analyze import (
    CandidateEntry,
    Gate,
    KeyLayout,
    Level,
    State,
    TopicEntry,
    Verdict,
)
from migcheck.model.partitioner import PartitionerChoice

#: The bytes each key layout appends to the hashed (inner) key, from Kafka Streams'
#: WindowKeySchema.toStoreKeyBinary (8-byte window start, 4-byte seqnum) and
#: SessionKeySchema.toBinary (8-byte end, 8-byte start), which its change-logging
#: stores write as the changelog key.  Preference order: the plain key first.
KEY_SUFFIX: dict[KeyLayout, int] = {KeyLayout.PLAIN: 0, KeyLayout.WINDOW: 12, KeyLayout.SESSION: 16}


@dataclass(frozen=True)
class PartitionerScore:
    """How one partitioner explains a topic's keys."""

    hashed: int  # (key, observed partition) pairs it hashes
    conforming: int  # of those, the ones it puts where they are
    unhashed_records: int  # records whose non-null key it does not hash

    @property
    def conformance(self) -> float | None:
        return self.conforming / self.hashed if self.hashed else None

    @property
    def placed_every_key(self) -> bool:
        """It hashed some key and put every hashed key where it is."""
        return self.hashed > 0 and self.conforming == self.hashed


#: Every score of a topic: per key layout (in preference order), per partitioner.
LayoutScores = Mapping[KeyLayout, Mapping[str, PartitionerScore]]


def choose_placement(
    requested: PartitionerChoice, scores: LayoutScores | None
) -> tuple[str | None, KeyLayout]:
    """The partitioner the prediction uses (None: refuse to predict) and the key layout.

    The first layout under which the partitioner (``auto``: the first that does,
    see :func:`choose_partitioner`) placed every hashed key, so a plain key is
    preferred.  When none did, the layout is the one that scored best, ties
    going to the earlier layout; a forced partitioner is still used as given.
    """
    if not scores:
        return choose_partitioner(requested, None), KeyLayout.PLAIN
    for layout, by_name in scores.items():
        if (name := placing(requested, by_name)) is not None:
            return name, layout
    best = max(scores, key=lambda layout: _best_conformance(scores[layout].values()))
    return choose_partitioner(requested, {}), best


def placing(requested: PartitionerChoice, by_name: Mapping[str, PartitionerScore]) -> str | None:
    """The partitioner that placed every hashed key under one layout's scores: ``auto``'s
    first that did, or the requested one if it did; None when none did."""
    if requested == PartitionerChoice.AUTO:
        return choose_partitioner(requested, by_name)
    score = by_name.get(requested)
    return requested if score is not None and score.placed_every_key else None


def _best_conformance(scores: Iterable[PartitionerScore]) -> float:
    return max((s.conformance for s in scores if s.conformance is not None), default=-1.0)


def choose_partitioner(
    requested: PartitionerChoice, scores: Mapping[str, PartitionerScore] | None
) -> str | None:
    """The partitioner the prediction uses, or None when migcheck must refuse to predict.

    A forced one (``requested`` is not ``auto``) is used as given.  ``auto``
    takes the first candidate that hashed some key and placed every hashed key
    where it is: a partitioner that explains only most keys is a guess, and a
    guess is what an approval gate must not run on.  Without keyed records
    there is nothing to identify it by.
    """
    if requested != PartitionerChoice.AUTO:
        return requested
    if scores is None:
        return None
    return next((name for name, score in scores.items() if score.placed_every_key), None)


def placed_alike(by_name: Mapping[str, PartitionerScore], name: str | None) -> tuple[str, ...]:
    """The other scored partitioners that placed every hashed key too: the observed keys
    cannot tell them from ``name`` (a few partitions, a small sample, or counts where two
    rules coincide, such as FNV-1a masked and unsigned at a power of two)."""
    if name is None or name not in by_name or not by_name[name].placed_every_key:
        return ()
    return tuple(n for n, s in by_name.items() if n != name and s.placed_every_key)


@dataclass(frozen=True)
class Share:
    """Keys (observed key, partition pairs) that exactly these partitioners place where
    they are, as a fraction of the keys the mixture explains."""

    partitioners: tuple[str, ...]
    share: float


def mixed_shares(
    by_name: Mapping[str, PartitionerScore], either: Mapping[tuple[str, str], int]
) -> tuple[Share, ...]:
    """A topic written by two clients: the first pair (in preference order) that together
    placed every hashed key while neither alone did, as each one's share and the share
    both place alike; empty when no pair explains every key.

    ``either[a, b]`` counts the keys ``a`` or ``b`` placed where they are."""
    if any(s.placed_every_key for s in by_name.values()):
        return ()
    for (a, b), union in either.items():
        sa, sb = by_name.get(a), by_name.get(b)
        if sa is None or sb is None or union == 0:
            continue
        if union != max(sa.hashed, sb.hashed) or union in (sa.conforming, sb.conforming):
            continue
        only_a, only_b = union - sb.conforming, union - sa.conforming
        return (
            Share((a,), only_a / union),
            Share((b,), only_b / union),
            Share((a, b), (union - only_a - only_b) / union),
        )
    return ()


def share_table(shares: Sequence[Share]) -> str:
    """The shares as one line: ``kafkajs-legacy 60.0%, sarama-reference 38.0%, both 2.0%``."""
    return ", ".join(
        f"{s.partitioners[0] if len(s.partitioners) == 1 else 'both'} {s.share:.1%}" for s in shares
    )


def mixed_verdict(shares: Sequence[Share]) -> Verdict:
    """Why a topic two clients wrote is not predicted, with the share each one places."""
    names = " and ".join(shares[0].partitioners + shares[1].partitioners)
    return {
        "level": Level.UNPREDICTABLE,
        "text": f"CANNOT PREDICT: written by two clients, {names}: keys placed by "
        f"{share_table(shares)}; each key moves by its own producer's rule, so no one "
        "partitioner predicts the topic. Force one with --partitioner to see its keys.",
    }


def ambiguous_verdict(
    names: Sequence[str], splits: Mapping[int, int], partitions: int = 0
) -> Verdict:
    """Why a topic is not predicted when partitioners placed every key alike but would
    move keys differently at a proposed count.  A topic of one partition always ties:
    every key is in partition 0 whatever the partitioner, so it is said so plainly
    rather than as a list of every candidate."""
    if partitions == 1:
        return {
            "level": Level.UNPREDICTABLE,
            "text": "CANNOT PREDICT: one partition: every key is in partition 0 whatever "
            "the producers' partitioner, so the keys cannot tell which one they use; "
            "pass it with --partitioner.",
        }
    worst = max(splits, key=lambda m: splits[m])
    return {
        "level": Level.UNPREDICTABLE,
        "text": f"CANNOT PREDICT: ambiguous: {' and '.join(names)} each placed every key "
        f"where it is, but put {splits[worst]:,} keys on different partitions at {worst} "
        "partitions; force the producers' one with --partitioner.",
    }


def unpredictable_verdict(
    conformance_by: Mapping[str, float | None], layout: KeyLayout = KeyLayout.PLAIN
) -> Verdict:
    """Why no prediction was made, naming the best partitioner, its conformance and,
    unless the key is hashed whole, the key layout it was scored on."""
    best = max(((c, name) for name, c in conformance_by.items() if c is not None), default=None)
    keys = "" if layout == KeyLayout.PLAIN else f" on {layout} keys"
    detail = f" (best: {best[1]} at {best[0]:.1%} conformance{keys})" if best else ""
    return {
        "level": Level.UNPREDICTABLE,
        "text": "CANNOT PREDICT: no known partitioner placed every key where it is"
        + detail
        + "; a custom partitioner or explicit partitions? Force one with --partitioner.",
    }


def topic_verdict(entry: TopicEntry) -> Verdict:
    """EMPTY, SAFE or STATE MOVES for a predicted topic, quoting its worst candidate."""
    cands = entry["candidates"]
    if entry["distinct_keys"] == 0:
        return {"level": Level.EMPTY, "text": "NOTHING TO MOVE: no keyed records found."}
    if all(c["moved_keys"] == 0 for c in cands):
        return {"level": Level.SAFE, "text": "SAFE: no key changes partition."}
    worst = max(cands, key=lambda c: c["moved_fraction"])
    approx = "~" if entry["sampled"] else ""
    what = "live state" if entry["state"] == State.LIVE else "keyed records"
    return {
        "level": Level.MOVES,
        "text": (
            f"STATE MOVES: going {entry['current_partitions']} -> {worst['partitions']} "
            f"partitions moves {approx}{worst['moved_fraction']:.1%} of keys "
            f"({approx}{worst['moved_keys']:,}) and {approx}{worst['moved_bytes']:,} bytes of "
            f"{what}; stateful consumers need reset-and-reprocess."
        ),
    }


@dataclass(frozen=True)
class GateRules:
    """The approval gate: ``--fail-if-moved`` and ``--max-moved-fraction``."""

    fail_if_moved: bool = False
    max_moved_fraction: float | None = None

    def breach(self, topic: str, cand: CandidateEntry) -> str | None:
        """Why this candidate fails the gate, or None."""
        if self.fail_if_moved and cand["moved_keys"] > 0:
            return f"{topic}: {cand['moved_keys']:,} keys move at {cand['partitions']} partitions"
        limit = self.max_moved_fraction
        if limit is not None and cand["moved_fraction"] > limit:
            return (
                f"{topic}: {cand['moved_fraction']:.1%} of keys move at {cand['partitions']} "
                f"partitions (limit {limit:.1%})"
            )
        return None


def gate(entries: Sequence[TopicEntry], rules: GateRules) -> Gate:
    """The gate's outcome over every topic and candidate, with every breach named."""
    reasons = [
        reason
        for t in entries
        for c in t["candidates"]
        if (reason := rules.breach(t["topic"], c)) is not None
    ]
    return {
        "fail_if_moved": rules.fail_if_moved,
        "max_moved_fraction": rules.max_moved_fraction,
        "failed": bool(reasons),
        "reason": "; ".join(reasons) or None,
    }
