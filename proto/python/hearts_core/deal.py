"""Seeded dealing and the seed commitment.

A game is fully determined by its rules, its seed and the players' decisions: the deal of hand
``k`` is a shuffle driven by ``SHA-256(seed, k)``, so any hand can be re-dealt on its own. Before
a game starts the referee publishes :func:`seed_commitment`; the game record reveals the seed,
and anyone can check that the deals are the ones the seed gives.

A seed anyone can guess gives every hand away, and the commitment lets a guess be checked, so
real seeds are secrets: :func:`new_seed` draws one, and :func:`keyed_seed` derives one from a
secret key (a tournament's deal secret) and a public id, so that knowing the id tells nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets

from hearts_core.cards import CARDS, Card
from hearts_core.rules import Rules

_DOMAIN = "cancellation-hearts/v1"


def new_seed() -> str:
    """A fresh, unguessable seed (128 random bits, hex)."""
    return secrets.token_hex(16)


def seed_commitment(seed: str) -> str:
    """The public commitment to ``seed``: ``sha256("cancellation-hearts/v1/commit:" + seed)``."""
    return hashlib.sha256(f"{_DOMAIN}/commit:{seed}".encode()).hexdigest()


def deal_hand(rules: Rules, seed: str, hand_index: int) -> tuple[list[list[Card]], list[Card]]:
    """Deals hand ``hand_index`` of a game seeded with ``seed``.

    Returns:
        The per-seat hands (each sorted) and the kitty (sorted).
    """
    digest = hashlib.sha256(f"{_DOMAIN}/deal:{seed}:{hand_index}".encode()).digest()
    rng = random.Random(int.from_bytes(digest, "big"))
    deck = [c for c in CARDS for _ in range(2)]
    rng.shuffle(deck)
    size = rules.hand_size
    n = rules.players
    hands = [sorted(deck[seat * size : (seat + 1) * size]) for seat in range(n)]
    kitty = sorted(deck[n * size :])
    return hands, kitty


def derive_seed(seed: str | int, *parts: object) -> str:
    """A child seed, e.g. one per game of a tournament: ``sha256(seed, parts...)`` in hex."""
    text = "/".join(str(p) for p in (seed, *parts))
    return hashlib.sha256(f"{_DOMAIN}/derive:{text}".encode()).hexdigest()[:32]


def keyed_seed(key: bytes, *parts: object) -> str:
    """A seed only the holder of ``key`` can compute: ``HMAC-SHA256(key, parts...)`` in hex.

    A tournament derives each deal's seed this way from its secret and the schedule's public id
    of the deal, so the schedule (or the config it comes from) tells nothing about the cards.
    """
    text = "/".join(str(p) for p in parts)
    return hmac.new(key, f"{_DOMAIN}/keyed:{text}".encode(), hashlib.sha256).hexdigest()[:32]
