"""Paying out one casino: the heart of every edition.

Kept as a pure function of (notes, weights) so the `score` contract, the live standings and
the round-end payout all share one implementation and cannot drift apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CasinoPayout:
    casino: int
    cancelled: tuple[str, ...]
    payouts: tuple[tuple[str, int], ...]
    unclaimed: tuple[int, ...]
    ranking: tuple[tuple[str, int], ...] = field(default=())

    def to_dict(self) -> dict:
        return {
            "casino": self.casino,
            "cancelled": list(self.cancelled),
            "payouts": [{"player": p, "amount": a} for p, a in self.payouts],
            "unclaimed": list(self.unclaimed),
        }


def pay_casino(casino: int, notes: Iterable[int], weights: Mapping[str, int]) -> CasinoPayout:
    """Cancel every tie, rank the rest, pay the notes high to low, one per player.

    `weights` is dice per player with a Biggy already counted as two; players with zero weight
    did not play here. Ties are cancelled at every rank, not only at the top: the printed
    rules say "two or more players have the same number of dice", anywhere in the casino.
    Players with equal weight are ranked by name only to make the result deterministic;
    they are cancelled anyway.
    """
    present = {p: w for p, w in weights.items() if w > 0}
    multiplicity = Counter(present.values())
    cancelled = tuple(sorted(p for p, w in present.items() if multiplicity[w] > 1))
    ranking = tuple(
        sorted(((p, w) for p, w in present.items() if multiplicity[w] == 1), key=lambda x: -x[1])
    )
    ordered = sorted(notes, reverse=True)
    payouts = tuple((p, ordered[i]) for i, (p, _) in enumerate(ranking[: len(ordered)]))
    unclaimed = tuple(ordered[len(payouts) :])
    return CasinoPayout(casino, cancelled, payouts, unclaimed, ranking)
