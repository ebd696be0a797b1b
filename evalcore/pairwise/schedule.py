"""Which arms each original pair of a session compares, and on which sides (``evalcore pairs make``).

A session of K arms (K >= 2) shows ``per_item`` original pairs of every item the K arms all answer
(``--pairs-per-item``, default 1); each pair compares two distinct arms, and an item shows an arm
pair at most once (so ``per_item`` <= K(K-1)/2; a mirror is how a pair is shown again). With two
arms there is one arm pair and one pair per item, drawn exactly as before K arms existed.

Balanced by construction, not by rejection:

- **Arm pairs within one.** The K(K-1)/2 unordered arm pairs are put in one cyclic order
  (:func:`arm_pair_cycle`) and the n x ``per_item`` slots take them in turn, so each arm pair gets
  floor or ceil of (n x per_item) / (K(K-1)/2) pairs, and any ``per_item`` consecutive slots (one
  item's) are distinct arm pairs.
- **Arms nearly even too.** The cycle is a round-robin tournament (the circle method): each
  round holds every arm once (K even) or all but one (K odd, a bye), so the leftover partial
  cycle spreads over the arms; arm appearances differ by at most one for even K and two for odd.
- **Items evenly.** Every item has exactly ``per_item`` pairs; which items get which arm pairs
  comes from a random order of the items (:func:`assign`).
- **Sides per arm pair.** Within each arm pair, exactly half of its original pairs (the odd one
  out a coin) have the arm given first (in ``--arm`` order) on the left, in a random arrangement
  (:func:`balanced_sides`, :func:`draw_sides`).

Randomness: the arm labels of the tournament, the order of its rounds and of the matches within a
round, and the order of the items all come from one generator the caller seeds with the secret key
seed (the schedule says which arms a pair compares: it belongs to the key), and the sides from
another. Nothing here reads a text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Slot = tuple[int, int, int]  # (item index, first arm index, second arm index), first < second


def balanced_sides(rng: np.random.Generator, n: int) -> np.ndarray:
    """n booleans, ``True`` = the first arm on the left: exactly half True (the odd one out a
    coin), in a random arrangement."""
    v = np.zeros(n, dtype=bool)
    v[: n // 2] = True
    if n % 2:
        v[n // 2] = bool(rng.random() < 0.5)
    return rng.permutation(v)


def n_arm_pairs(k: int) -> int:
    return k * (k - 1) // 2


def arm_pair_cycle(rng: np.random.Generator, k: int) -> list[tuple[int, int]]:
    """The K(K-1)/2 arm pairs (lower index first) as the rounds of a round-robin tournament (circle
    method) on randomly relabelled arms, rounds and the matches within them in random order."""
    if k == 2:
        return [(0, 1)]
    n = k + k % 2  # an odd K plays a bye (arm index k) each round
    label = rng.permutation(k).tolist() + [k]
    ring = list(range(n))
    rounds = []
    for _ in range(n - 1):
        games = [(label[ring[i]], label[ring[n - 1 - i]]) for i in range(n // 2)]
        rounds.append([(min(a, b), max(a, b)) for a, b in games if k not in (a, b)])
        ring = [ring[0], ring[-1], *ring[1:-1]]
    out: list[tuple[int, int]] = []
    for r in rng.permutation(len(rounds)):
        games = rounds[int(r)]
        out += [games[int(g)] for g in rng.permutation(len(games))]
    return out


def assign(rng: np.random.Generator, n_items: int, k: int, per_item: int) -> list[Slot]:
    """The original pairs' slots, item by item (item index order) and within an item in the
    cycle's order: a random order of the items takes the arm pairs of :func:`arm_pair_cycle` in turn."""
    if not 1 <= per_item <= n_arm_pairs(k):
        raise ValueError(f"per_item {per_item} is not between 1 and {n_arm_pairs(k)}")
    cycle = arm_pair_cycle(rng, k)
    order = np.arange(n_items) if k == 2 else rng.permutation(n_items)
    slots = []
    for b, item in enumerate(order.tolist()):
        slots += [(item, *cycle[(b * per_item + r) % len(cycle)]) for r in range(per_item)]
    return sorted(slots)


def draw_sides(rng: np.random.Generator, slots: Sequence[Slot]) -> np.ndarray:
    """For each slot, whether its first arm is on the left: :func:`balanced_sides` over each arm
    pair's slots in slot order, arm pairs in index order (two arms: one draw over the items, as
    before K arms)."""
    sides = np.zeros(len(slots), dtype=bool)
    for pair in sorted({(i, j) for _, i, j in slots}):
        at = [s for s, (_, i, j) in enumerate(slots) if (i, j) == pair]
        sides[at] = balanced_sides(rng, len(at))
    return sides
