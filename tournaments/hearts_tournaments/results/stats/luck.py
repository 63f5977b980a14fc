"""Luck terms of a stored game: control variates with expectation zero whatever the bots do.

A game's result mixes the bots' skill with luck: the cards each seat is dealt, and the choices
of seats whose play is itself random. For each hand of a game record this module computes, per
seat, terms whose expectation is exactly zero however every bot plays, and which are
correlated with what the seat scored; subtracting a multiple of them (see
:mod:`hearts_tournaments.results.stats.adjust`) leaves every mean where it was and can
narrow its interval.

**The deal term.** Let ``v(d, s)`` be any value of seat ``s`` in the hand dealt ``d``: here the
mean score of seat ``s`` over play-outs of the hand on the simulator (:mod:`hearts_client.sim`)
from the real totals and hand index, every seat playing by its bot's policy where that is known
(the built-in ``random`` bot) and by a reference policy (the heuristic) otherwise; one play-out
when every policy is deterministic, :attr:`LuckSettings.rollouts` when one is random. Let ``rho^k d`` be
the same deal with the hands turned by ``k`` seats (seat ``s`` holds what seat ``s - k`` was
dealt; the kitty, the dealer and the pass direction stay). The deal term is::

    c_s(d) = v(d, s) - (1 / n) * sum_k v(rho^k d, s)

The referee deals every hand from a fresh seed, so ``rho^k d`` is dealt exactly as often as
``d`` and, given everything before the hand, ``E[v(rho^k d, s)] = E[v(d, s)]``: the term has
expectation zero, whatever the bots did before or do after. It needs no expectation over all
deals, only the ``n`` turns of this one; and it compares seat ``s`` with itself, because
seats differ within a hand (the seat left of the dealer leads, passes go one way). The
play-outs' own noise adds variance, never bias, as long as every turn is valued the same way
(the same number of play-outs from the same seeds).

**Action terms.** At a decision of a seat whose policy is known and random (the built-in
``random`` bot: a uniformly random legal card), for every seat ``s``::

    a_s = V_s(after the card played) - mean over the legal cards c of V_s(after c)

which has expectation zero given everything before the decision, because the card was drawn
uniformly from those. ``V_s`` here is seat ``s``'s points in the hand once the trick in
progress is completed by the seats' play-out policies (averaged over the play-outs when one of
them is random): cheap, and it carries most of what one card does (whose trick the points land
in); whole-hand play-outs measured no better at twice the cost. A deterministic bot (``heuristic``, the
referee's default rule for absent or retired seats) makes every term zero: its choice is
known, so there is nothing to average. An unknown bot's decisions can carry no such term
(AIVAT, Burch et al. 2017, arXiv:1612.06915, corrects at chance events and known-policy
decisions only).

**What it cannot do.** With duplicate deals played in every rotation, each bot holds every
seat of a deal once, so its deal terms over the deal's games sum to the same number for every
bot (one per seat it fills): differences between bots do not change, and the deal terms bring
nothing there (games of unequal length leave a small remainder). They help where deals are not
played in every rotation: ``duplicate = false``, single games on fresh deals. The action terms
help wherever known random seats play, duplicate or not. How much each helps is measured by
``bench/luck.py`` (docs/TOURNAMENTS.md, *Luck correction*).

Everything is deterministic: play-outs are seeded from :attr:`LuckSettings.seed`, the hand and
the turn, never from the clock.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from hearts_core.cards import Card
from hearts_core.record import GameRecord, RecordFileError
from hearts_core.rules import DEFAULT_MAX_HANDS, DEFAULT_MOON_CHOICE, DEFAULT_TARGET_SCORE
from hearts_tournaments.results.stats.adjust import Observation, adjust

#: Built-in policies whose decisions get action terms: a known distribution that is not a
#: single card. ``heuristic`` is known too, but deterministic: its terms are all zero.
KNOWN_POLICIES = ("random",)
#: Simulator policies a reference play-out may use (``hearts_client.sim``'s named policies).
REFERENCE_POLICIES = ("heuristic", "random")
#: Decimal places kept when terms are stored.
DIGITS = 9


class LuckError(ValueError):
    """A record the luck terms cannot be computed from; the message says which and why."""


@dataclass(frozen=True, slots=True)
class LuckSettings:
    """How the luck terms are computed.

    Attributes:
        policy: The play-out policy of a seat whose bot's policy is unknown (a simulator
            policy: ``heuristic`` or ``random``); a known seat plays out by its own policy.
        rollouts: Play-outs that value a position when some seat plays at random (one when
            every play-out policy is deterministic: they would all be the same).
        seed: Seeds the random seats' play-outs.
    """

    policy: str = "heuristic"
    rollouts: int = 8
    seed: str = "luck"

    def __post_init__(self) -> None:
        if self.policy not in REFERENCE_POLICIES:
            raise ValueError(f"policy must be one of {', '.join(REFERENCE_POLICIES)}, not {self.policy!r}")
        if self.rollouts < 1:
            raise ValueError(f"rollouts must be at least 1, not {self.rollouts}")

    def to_json(self) -> dict[str, Any]:
        """The settings as published with the results."""
        return {"policy": self.policy, "rollouts": self.rollouts, "seed": self.seed}

    def describe(self) -> str:
        """The settings in a few words, for a report's method line."""
        return (
            f"play-outs of every turn of each deal, by the {self.policy} for a bot of unknown policy "
            f"and by its own for a known one ({self.rollouts} play-outs where one plays at random)"
        )


@dataclass(frozen=True, slots=True)
class HandLuck:
    """One hand's scores and luck terms, per seat.

    Attributes:
        scores: What each seat scored in the hand (moon shots included), as recorded.
        deal: The deal term of each seat (expectation zero).
        action: The sum of each seat's action terms over the hand (expectation zero; all zero
            without a known random seat).
    """

    scores: tuple[int, ...]
    deal: tuple[float, ...]
    action: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class GameLuck:
    """A game's luck terms, hand by hand.

    Attributes:
        players: The table size.
        hands: Every hand of the game, in order.
        known: The seats whose decisions got action terms, with their policy.
    """

    players: int
    hands: tuple[HandLuck, ...]
    known: tuple[tuple[int, str], ...] = ()

    def points(self, seat: int) -> int:
        """What ``seat`` scored over the game."""
        return sum(h.scores[seat] for h in self.hands)

    def deal_sum(self, seat: int) -> float:
        """``seat``'s deal terms summed over the game."""
        return sum(h.deal[seat] for h in self.hands)

    def action_sum(self, seat: int) -> float:
        """``seat``'s action terms summed over the game."""
        return sum(h.action[seat] for h in self.hands)

    def to_json(self) -> dict[str, Any]:
        """The terms as stored (floats rounded to :data:`DIGITS` places)."""
        return {
            "players": self.players,
            "known": [[seat, policy] for seat, policy in self.known],
            "hands": [
                {
                    "scores": list(h.scores),
                    "deal": [round(x, DIGITS) for x in h.deal],
                    "action": [round(x, DIGITS) for x in h.action],
                }
                for h in self.hands
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameLuck:
        """The terms stored by :meth:`to_json`.

        Raises:
            KeyError, TypeError, ValueError: if ``data`` is not such an object.
        """
        players = int(data["players"])
        hands = tuple(
            HandLuck(
                tuple(int(x) for x in h["scores"]),
                tuple(float(x) for x in h["deal"]),
                tuple(float(x) for x in h["action"]),
            )
            for h in data["hands"]
        )
        if any(len(h.scores) != players or len(h.deal) != players or len(h.action) != players for h in hands):
            raise ValueError(f"every hand needs {players} scores and terms")
        return cls(players, hands, tuple((int(s), str(p)) for s, p in data.get("known", ())))


def game_luck(
    record: GameRecord, settings: LuckSettings | None = None, known: Mapping[int, str] | None = None
) -> GameLuck:
    """The luck terms of every hand of a game record.

    Args:
        record: A finished game's record (every hand complete).
        settings: The reference policy and its play-outs (default :class:`LuckSettings`).
        known: The seats whose bot's policy is known and random, with the policy's name (one
            of :data:`KNOWN_POLICIES`): their decisions get action terms, except those the
            referee or the bot's SDK made for them (the record's decision log says which).

    Raises:
        LuckError: if a known policy is not one of :data:`KNOWN_POLICIES`, or the record does
            not replay (a hand incomplete, a card that is not legal).
    """
    # The simulator (and the SDK package it sits in) loads when terms are computed, not when the
    # standings' module is imported.
    from hearts_client.sim import MOON, Game

    settings = settings or LuckSettings()
    known = dict(known or {})
    n = record.players
    for seat, policy in known.items():
        if policy not in KNOWN_POLICIES:
            raise LuckError(
                f"seat {seat}: no action terms for policy {policy!r} (known: {', '.join(KNOWN_POLICIES)})"
            )
        if not 0 <= seat < n:
            raise LuckError(f"seat {seat} is not a seat of a table of {n}")
    if not record.hands:
        return GameLuck(n, (), tuple(sorted(known.items())))
    decided_for = _decided_for(record)
    policies = [known.get(seat, settings.policy) for seat in range(n)]
    first_dealer = record.hands[0].dealer
    rules = {
        "target_score": DEFAULT_TARGET_SCORE if record.target_score is None else record.target_score,
        "max_hands": DEFAULT_MAX_HANDS if record.max_hands is None else record.max_hands,
        "first_dealer": first_dealer,
    }
    totals = [0] * n
    hands = []
    for index, hand in enumerate(record.hands):
        try:
            deal = [_cards(h) for h in hand.deal]
            kitty = _cards(hand.kitty)

            start = partial(
                Game.from_hands, n, kitty=kitty, hand_index=index, totals=totals, seed=settings.seed, **rules
            )
            seed = _seed(settings.seed, index)
            deal_terms = _deal_terms(start, deal, policies, settings, seed)
            game = start(deal)
            for seat, passed in enumerate(hand.passes):
                game.apply_pass(seat, _cards(passed))
            action = [0.0] * n
            for play, code in enumerate(hand.plays):
                card = int(Card.parse(code))
                if game.current_player in known and (index, play) not in decided_for:
                    _add_action_terms(action, game, card, policies, settings, seed + 7919 * (play + 1))
                game.apply_action(card)
            if game.phase == MOON:
                game.apply_moon(hand.moon_choice or DEFAULT_MOON_CHOICE.value)
            if game.hand_index == index and not game.is_over():
                raise LuckError(f"hand {index} is not complete in the record")
            scores = tuple(int(x) for x in game.hand_scores_history()[-1])
        except (ValueError, RecordFileError) as exc:
            if isinstance(exc, LuckError):
                raise
            raise LuckError(f"hand {index} does not replay: {exc}") from None
        hands.append(HandLuck(scores, tuple(deal_terms), tuple(action)))
        totals = [t + s for t, s in zip(totals, scores, strict=True)]
    return GameLuck(n, tuple(hands), tuple(sorted(known.items())))


def _cards(codes: Sequence[str]) -> list[int]:
    return [int(Card.parse(c)) for c in codes]


def _seed(seed: str, hand: int) -> int:
    """A 63-bit play-out seed for one hand, from the settings' seed."""
    digest = hashlib.sha256(f"{seed}/{hand}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _decided_for(record: GameRecord) -> set[tuple[int, int]]:
    """The plays (hand, index within the hand) the referee or the bot's SDK chose for the seat:
    not the bot's policy, so they get no action term."""
    return {
        (d.hand, d.play)
        for d in record.decisions or ()
        if d.kind == "play" and d.play is not None and (d.by_referee is not None or d.bot_error)
    }


def _deal_terms(
    start: Any, deal: list[list[int]], policies: Sequence[str], settings: LuckSettings, seed: int
) -> list[float]:
    """``c_s(d)`` for every seat: the deal's value from each seat minus its mean over the
    turns of the deal."""
    values = _turn_values(start, deal, policies, settings, seed)
    n = len(deal)
    return [values[0][s] - sum(v[s] for v in values) / n for s in range(n)]


def _turn_values(
    start: Any, deal: Sequence[Sequence[int]], policies: Sequence[str], settings: LuckSettings, seed: int
) -> list[list[float]]:
    """``v(rho^k d, s)`` for every turn ``k`` and seat ``s``: the mean score of each seat over
    play-outs of the hand with the deal turned by ``k`` seats (every seat keeps its policy; the
    cards move), every turn played out from the same seeds.

    Args:
        start: Builds the simulator game at the start of the hand from the hands per seat.
        deal: The hands as dealt, per seat (card numbers 0..51).
        policies: Each seat's play-out policy (``heuristic`` or ``random``).
        settings: How many play-outs when a policy is random.
        seed: Seeds the play-outs.
    """
    n = len(deal)
    runs = _playouts(policies, settings)
    values = []
    for k in range(n):
        turned = [deal[(s - k) % n] for s in range(n)]
        total = [0.0] * n
        for r in range(runs):
            game = start(turned)
            _play(game, policies, random.Random(seed + r), game.hand_index, None)
            for s, x in enumerate(game.hand_scores_history()[-1]):
                total[s] += x
        values.append([t / runs for t in total])
    return values


def _playouts(policies: Sequence[str], settings: LuckSettings) -> int:
    """Play-outs that value a position: one when every policy is deterministic."""
    return settings.rollouts if "random" in policies else 1


def _play(game: Any, policies: Sequence[str], rng: random.Random, hand: int, trick: int | None) -> None:
    """Plays ``game`` on, each seat by its policy, to the end of hand ``hand`` (or of trick
    ``trick`` of it, when given). A random seat's moon choice is the default rule's, as the
    built-in random bot's is."""
    from hearts_client.sim import MOON, PLAY

    if trick is None and all(p == "heuristic" for p in policies):
        game.play_out("heuristic", hands=1)  # the native loop
        return
    while game.hand_index == hand and not game.is_over():
        if trick is not None and (game.trick_index != trick or game.phase != PLAY):
            return
        seat = game.current_player
        if policies[seat] == "random" and game.phase != MOON:
            game.apply_action(rng.choice(game.legal_actions()))
        else:
            game.apply_action(game.policy_action("heuristic"))


def _add_action_terms(
    action: list[float], game: Any, card: int, policies: Sequence[str], settings: LuckSettings, seed: int
) -> None:
    """Adds to ``action`` the terms of one uniformly random card: each seat's value after the
    card played minus its mean value over the legal cards."""
    legal = game.legal_actions()
    if len(legal) < 2:
        return
    values = {a: _trick_value(game, a, policies, settings, seed) for a in legal}
    for s in range(len(action)):
        mean = sum(v[s] for v in values.values()) / len(values)
        action[s] += values[card][s] - mean


def _trick_value(
    game: Any, card: int, policies: Sequence[str], settings: LuckSettings, seed: int
) -> list[float]:
    """Each seat's points in the hand after ``card`` is played and the trick in progress is
    completed by the seats' policies (averaged over the play-outs when one is random)."""
    hand, trick = game.hand_index, game.trick_index
    runs = _playouts(policies, settings)
    total = [0.0] * len(policies)
    for r in range(runs):
        after = game.clone()
        after.apply_action(card)
        _play(after, policies, random.Random(seed + r), hand, trick)
        done = after.hand_index != hand or after.is_over()
        points = after.hand_scores_history()[-1] if done else after.points()
        for s, x in enumerate(points):
            total[s] += x
    return [t / runs for t in total]


@dataclass(frozen=True, slots=True)
class LuckGame:
    """One game as :func:`correct` takes it.

    Attributes:
        cluster: Its deal (the unit of independence: all games of a deal share its cards).
        seats: The bot at each seat.
        places: Each seat's finishing place (1 = best; tied totals share the better place).
        luck: Its luck terms (:func:`game_luck`).
    """

    cluster: Hashable
    seats: tuple[str, ...]
    places: tuple[int, ...]
    luck: GameLuck


@dataclass(frozen=True, slots=True)
class CorrectedSeat:
    """One seat of one game, luck-corrected (each has the expectation of what it corrects).

    Attributes:
        points: The seat's points over the game.
        place: Its finishing place (1 = best, tied totals sharing the better place).
        midrank: Its finishing place with tied totals sharing the mean of their places (the
            ``corrections`` of
            :func:`~hearts_tournaments.results.stats.plackett_luce.bootstrap_plackett_luce`).
        hands: Hands played (not corrected).
    """

    points: float
    place: float
    midrank: float
    hands: int


def correct(games: Sequence[LuckGame], forward: bool = False) -> list[tuple[CorrectedSeat, ...]]:
    """Every seat of every game with its luck taken out, as far as the games show it can be.

    Points are adjusted by the seat's deal and action terms summed over the game; places by
    the same terms relative to the other seats' mean (a place depends on the others' luck as
    much as on the seat's own). The coefficients are fitted by
    :func:`hearts_tournaments.results.stats.adjust.adjust`: per outcome, within bots,
    cross-fitted over deals, so every corrected value keeps the expectation of the raw one.
    With fewer than three deals nothing is corrected.

    Args:
        games: The games, each with its deal and luck terms.
        forward: Fit each deal's coefficients on the deals before it only (deals in the order
            they first appear): a deal's corrected values then never change as later deals are
            played, as a sequential test needs. Else on every other deal.

    Returns:
        Per game (in the order given), per seat, the corrected values.
    """
    points: list[Observation] = []
    places: list[Observation] = []
    middles: list[Observation] = []
    for game in games:
        luck = game.luck
        n = luck.players
        if len(game.seats) != n or len(game.places) != n:
            raise ValueError(f"a game of {n} seats needs {n} bots and places")
        deal = [luck.deal_sum(s) for s in range(n)]
        action = [luck.action_sum(s) for s in range(n)]
        mid = midranks(game.places)
        for s, bot in enumerate(game.seats):
            own = (deal[s], action[s])
            relative = (
                deal[s] - (sum(deal) - deal[s]) / (n - 1),
                action[s] - (sum(action) - action[s]) / (n - 1),
            )
            points.append(Observation(game.cluster, bot, float(luck.points(s)), own))
            places.append(Observation(game.cluster, bot, float(game.places[s]), relative))
            middles.append(Observation(game.cluster, bot, mid[s], relative))
    fixed = zip(adjust(points, forward), adjust(places, forward), adjust(middles, forward), strict=True)
    out: list[tuple[CorrectedSeat, ...]] = []
    for game in games:
        hands = len(game.luck.hands)
        out.append(tuple(CorrectedSeat(p, q, m, hands) for p, q, m in (next(fixed) for _ in game.seats)))
    return out


def midranks(places: Sequence[int]) -> list[float]:
    """Places with ties sharing the mean of the places they span (from places where ties
    share the better one)."""
    return [p + (sum(1 for q in places if q == p) - 1) / 2 for p in places]
