"""Games built from outside facts, written once for both backends: records, Views and worlds.

Everything here stands on the backend's :class:`Game` primitives (``from_hands``,
``apply_pass``, ``apply_play``, ``apply_moon`` and the hand read-outs), so the native module and
the fallback give the same results by construction:

* :func:`replay_outcome` replays a game record (or a conformance vector's) through the
  simulator into the conformance outcome ``hearts replay`` prints, stopping at the first illegal
  thing in the order the conformance README fixes (rotation, deal, passes seat by seat with the
  count before the cards, plays);
* :func:`from_record` is the start of one hand of a record;
* :func:`from_view` is a determinization: a full game consistent with one seat's View, the
  hidden cards placed as a sampled :class:`~hearts_client.sampler.World` says;
* :func:`sample_worlds` draws such worlds (:class:`~hearts_client.sampler.WorldSampler`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hearts_client.sampler import World, WorldSampler
from hearts_core.cards import CARDS, Card
from hearts_core.errors import BadPlayerCount, HeartsError
from hearts_core.record import GameRecord
from hearts_core.replay import as_record, rules_of
from hearts_core.rules import DEFAULT_MOON_CHOICE, PassDirection
from hearts_core.state import Phase
from hearts_core.view import View

PLAY = 1
MOON = 2
OVER = 3


class _Game(Protocol):
    @property
    def phase(self) -> int: ...
    @property
    def players(self) -> int: ...
    @property
    def current_player(self) -> int: ...
    def apply_pass(self, seat: int, cards: Sequence[int]) -> None: ...
    def apply_play(self, card: int) -> None: ...
    def apply_moon(self, choice: int | str) -> None: ...
    def clone(self) -> Any: ...
    def tricks(self) -> list[tuple[int, list[int], int]]: ...
    def points(self) -> list[int]: ...
    def totals(self) -> list[int]: ...
    def hand_scores_history(self) -> list[list[int]]: ...
    @property
    def moon_shooter(self) -> int | None: ...
    def uncollected(self) -> list[int]: ...


G = TypeVar("G")


class _Stop(Exception):
    """An illegal thing in the record: the outcome's ``error``."""

    def __init__(self, code: str, **where: int) -> None:
        super().__init__(code)
        self.error: dict[str, Any] = {"code": code, **where}


class _RecordEnds(Exception):
    pass


def _codes(codes: Sequence[str], code: str, **where: int) -> list[int]:
    try:
        return [int(Card.parse(c)) for c in codes]
    except ValueError:
        raise _Stop(code, **where) from None


def _new_hand(
    game_cls: Any,
    record: GameRecord,
    index: int,
    totals: list[int],
    last: int,
    history: list[list[int]] | None = None,
) -> Any:
    """The simulator game at the start of hand ``index`` of ``record`` (checked as replay checks
    it), ``history`` its earlier hands' scores."""
    rules = rules_of(record)
    hands = record.hands
    if index >= len(hands):
        raise _RecordEnds
    hand = hands[index]
    direction = PassDirection.for_hand(index)
    if hand.dealer != rules.dealer(index) or hand.pass_direction != direction.value:
        raise _Stop("BAD_ROTATION", hand=index)
    kitty = _codes(hand.kitty, "BAD_DEAL", hand=index)
    deal = [_codes(h, "BAD_DEAL", hand=index) for h in hand.deal]
    try:
        return game_cls.from_hands(
            rules.players, deal, kitty, hand_index=index, totals=totals,
            seed=record.seed or "", target_score=rules.target_score,
            max_hands=last, first_dealer=rules.first_dealer, history=history,
        )  # fmt: skip
    except ValueError as exc:
        if getattr(exc, "code", None) == "BAD_DEAL":
            raise _Stop("BAD_DEAL", hand=index) from None
        raise


def _play_hand(game: Any, record: GameRecord, index: int) -> None:
    """Plays hand ``index`` of ``record`` in ``game`` (at its start) to the hand's end."""
    n = game.players
    hand = record.hands[index]
    passed = hand.passes
    if len(passed) != n:
        raise _Stop("BAD_PASS", hand=index)
    for seat, codes in enumerate(passed):
        if len(codes) != 3:
            raise _Stop("BAD_PASS_COUNT", hand=index, seat=seat)
        cards = _codes(codes, "PASS_NOT_IN_HAND", hand=index, seat=seat)
        try:
            game.apply_pass(seat, cards)
        except ValueError as exc:
            raise _Stop(getattr(exc, "code", "PASS_NOT_IN_HAND"), hand=index, seat=seat) from None
    plays = hand.plays
    total = n * (104 // n)
    i = 0
    while game.phase == PLAY:
        seat = game.current_player
        if i >= len(plays):
            raise _Stop("INCOMPLETE", hand=index, play=len(plays))
        try:
            card = int(Card.parse(plays[i]))
        except ValueError:
            raise _Stop("NOT_IN_HAND", hand=index, play=i, seat=seat) from None
        try:
            if i == total - 1 and len(plays) > total:
                game.clone().apply_play(card)
                raise _Stop("EXTRA_PLAYS", hand=index, play=total)
            game.apply_play(card)
        except ValueError as exc:
            code = getattr(exc, "code", None)
            if code is None:
                raise
            raise _Stop(code, hand=index, play=i, seat=seat) from None
        i += 1
    if game.phase == MOON:
        choice = hand.moon_choice or DEFAULT_MOON_CHOICE.value
        if choice not in ("self_minus_26", "others_plus_26"):
            raise _Stop("BAD_MOON_CHOICE", hand=index)
        game.apply_moon(choice)


def _hand_outcome(game: Any) -> dict[str, Any]:
    moon = game.moon_shooter
    return {
        "tricks": [
            {
                "leader": leader,
                "cards": [str(CARDS[c]) for c in cards],
                "winner": None if winner < 0 else winner,
            }
            for leader, cards, winner in game.tricks()
        ],
        "points": game.points(),
        "scores": game.hand_scores_history()[-1],
        "moon": moon,
        "uncollected": [str(CARDS[c]) for c in game.uncollected()],
    }


def _run(game_cls: Any, record: GameRecord, stop_at: int | None = None) -> tuple[dict[str, Any], list[int]]:
    """Replays ``record`` (up to hand ``stop_at``, exclusive) and returns (outcome, totals)."""
    try:
        rules = rules_of(record)
    except BadPlayerCount as exc:
        return {"hands": [], "totals": [], "game_over": False, "winners": [], "error": exc.to_json()}, []
    except HeartsError as exc:
        zeros = [0] * record.players
        return {
            "hands": [],
            "totals": zeros,
            "game_over": False,
            "winners": [],
            "error": exc.to_json(),
        }, zeros
    n = rules.players
    totals = [0] * n
    hands: list[dict[str, Any]] = []
    over = False
    count = len(record.hands) if stop_at is None else stop_at
    error: dict[str, Any] | None = None
    index = 0
    try:
        while True:
            if over:
                if index < len(record.hands):
                    raise _Stop("GAME_ALREADY_OVER", hand=index)
                break
            if index >= count:
                break
            # The simulator's game ends with this hand (max_hands = index + 1): its read-outs
            # then stay on the hand, and the real end of the game is decided here.
            game = _new_hand(game_cls, record, index, totals, index + 1)
            _play_hand(game, record, index)
            hands.append(_hand_outcome(game))
            totals = game.totals()
            over = max(totals) >= rules.target_score or index + 1 >= rules.max_hands
            index += 1
    except _RecordEnds:
        pass
    except _Stop as stop:
        error = stop.error
    game_over = over and error is None
    low = min(totals)
    outcome = {
        "hands": hands,
        "totals": totals,
        "game_over": game_over,
        "winners": [s for s, t in enumerate(totals) if t == low] if game_over else [],
        "error": error,
    }
    return outcome, totals


def replay_outcome(game_cls: Any, record: GameRecord | Mapping[str, Any]) -> dict[str, Any]:
    """The conformance outcome of ``record`` replayed through ``game_cls`` (as ``hearts replay``;
    a JSON object is read leniently, as there)."""
    return _run(game_cls, as_record(record))[0]


def from_record(game_cls: type[G], record: GameRecord | Mapping[str, Any] | str | Path, hand: int = 0) -> G:
    """The start of hand ``hand`` of ``record`` (typed, its JSON object, or a record / vector file's path).

    The deal is the record's; the totals and ``hand_scores_history()`` are those of the
    record's earlier hands, replayed through the simulator; later hands are dealt from the
    record's ``seed`` (if it has one).

    Raises:
        ValueError: if the record has no such hand or is illegal before it (the reason named).
        RecordFileError: if the file cannot be read as a record.
    """
    if isinstance(record, str | Path):
        record = GameRecord.read(Path(record), lenient=True).record
    record = as_record(record)
    if not 0 <= hand < len(record.hands):
        raise ValueError(f"the record has {len(record.hands)} hands: no hand {hand}")
    outcome, totals = _run(game_cls, record, stop_at=hand)
    if outcome["error"] is not None:
        raise ValueError(f"the record is illegal before hand {hand}: {outcome['error']}")
    if outcome["game_over"]:
        raise ValueError(f"the record's game was over before hand {hand}")
    rules = rules_of(record)
    history = [list(h["scores"]) for h in outcome["hands"]]
    try:
        return _new_hand(game_cls, record, hand, totals, rules.max_hands, history)  # type: ignore[no-any-return]
    except _Stop as stop:
        raise ValueError(f"hand {hand} of the record is illegal: {stop.error}") from None


def from_view(game_cls: type[G], view: View, world: World, seed: str | int = "") -> G:
    """A determinization: the whole game as ``view``'s seat may believe it, hidden cards from ``world``.

    The game is rebuilt from the start of the hand's play: each seat holds its ``world`` hand
    plus the cards it has played this hand, the kitty is ``world.kitty``, and every card played
    is replayed in order, so tricks, points, voids and the seat to play follow from the rules.
    During passing it is the start of the hand, the seat's own pass (if made) applied, as native.
    Hands after this one are dealt from ``seed`` (default ``""``, as the native module). After
    passing, ``passed(seat)`` and ``received(seat)`` are the view's own for its seat and empty
    for every other seat (the game starts from the hands after the passes, as native).

    Raises:
        ValueError: if the view is not inside a hand or the world does not fit it.
    """
    rules = view.rules
    n = rules.players
    common = {
        "hand_index": view.hand_index, "totals": list(view.totals), "seed": seed,
        "history": [list(summary.scores) for summary in view.history],
        "target_score": rules.target_score, "max_hands": rules.max_hands,
        "first_dealer": rules.first_dealer,
    }  # fmt: skip
    if view.phase is Phase.PASSING:
        hands = [[int(c) for c in h] for h in world.hands]
        if hands[view.seat] != [int(c) for c in view.hand]:
            raise ValueError("the world's hand for the view's seat is not the seat's hand")
        game = game_cls.from_hands(n, hands, [int(c) for c in world.kitty], **common)  # type: ignore[attr-defined]
        if view.passed:  # as native: the seat's own pass, once made, is applied
            game.apply_pass(view.seat, [int(c) for c in view.passed])
        return game  # type: ignore[no-any-return]
    if view.phase not in (Phase.PLAYING, Phase.MOON_CHOICE):
        raise ValueError(f"no hand in progress (phase {view.phase})")
    played = view.played_cards()
    hands = [[int(c) for c in h] for h in world.hands]
    for seat, card in played:
        hands[seat].append(int(card))
    # As the native module: the hands after the passes are the start; only the view's seat
    # knows a pass, its own (what it passed and what it received).
    passes: list[list[int]] = [[] for _ in range(n)]
    game = game_cls.from_hands(n, hands, [int(c) for c in world.kitty], passes=passes, **common)  # type: ignore[attr-defined]
    game._know_pass(view.seat, [int(c) for c in view.passed], [int(c) for c in view.received])
    try:
        for seat, card in played:
            if game.current_player != seat:
                raise ValueError(f"seat {seat} played out of turn in the view")
            game.apply_play(int(card))
    except ValueError as exc:
        raise ValueError(f"the world does not fit the view: {exc}") from None
    return game  # type: ignore[no-any-return]


def sample_worlds(view: View, n: int, seed: int | str = 0) -> list[World]:
    """``n`` placements of the hidden cards consistent with ``view`` (deterministic in ``seed``).

    A wrapper of :class:`hearts_client.sampler.WorldSampler` drawing from ``random.Random(seed)``.

    Raises:
        ValueError: if the view is not inside a hand, or ``n`` is negative.
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    sampler = WorldSampler(view)
    rng = random.Random(seed)
    return [sampler.sample(rng) for _ in range(n)]
