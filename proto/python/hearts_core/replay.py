"""Replaying a game record into its conformance outcome.

Replay is the one game driver (:mod:`hearts_core.driver`) answered from the record: a fresh
:class:`State` gets the record's deals, passes, plays and moon choices.
It stops at the first illegal thing and reports it with its conformance code, in the order the
conformance README fixes: rotation, deal, passes (seat by seat, count before cards), then plays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hearts_core.cards import Card
from hearts_core.deal import deal_hand, seed_commitment
from hearts_core.driver import Answer, play_through
from hearts_core.errors import (
    BadDeal,
    BadPass,
    BadPassCount,
    BadPlayerCount,
    BadRotation,
    ExtraPlays,
    GameAlreadyOver,
    HeartsError,
    Incomplete,
    NotInHand,
    PassNotInHand,
)
from hearts_core.record import GameRecord, HandRecord, RecordFileError, outcome_of
from hearts_core.rules import (
    DEFAULT_MAX_HANDS,
    DEFAULT_MOON_CHOICE,
    DEFAULT_TARGET_SCORE,
    PassDirection,
    Rules,
)
from hearts_core.state import Deal, Decision, DecisionKind, Moon, Pass, Play, State


def rules_of(record: GameRecord) -> Rules:
    """The rules a record was played under.

    Raises:
        BadPlayerCount: if ``players`` is not 6..11.
        BadRotation: if the first hand's dealer is not a seat.
    """
    players = record.players
    first = record.hands[0].dealer if record.hands else 0
    Rules(players)  # the player count is checked before anything else
    if not 0 <= first < players:
        raise BadRotation(f"dealer {first!r} is not a seat", hand=0)
    return Rules(
        players=players,
        target_score=DEFAULT_TARGET_SCORE if record.target_score is None else record.target_score,
        max_hands=DEFAULT_MAX_HANDS if record.max_hands is None else record.max_hands,
        first_dealer=first,
    )


def _cards(codes: Sequence[str], error: type[HeartsError], **where: int) -> list[Card]:
    try:
        return [Card.parse(c) for c in codes]
    except ValueError as exc:
        raise error(str(exc), **where) from None


def record_answers(state: State, hands: Sequence[HandRecord]) -> Callable[[Decision], Answer]:
    """Answers a game's decisions from a record's hands, checking the record as it goes.

    Problems come out as the :class:`HeartsError` of the first illegal thing, in the order the
    conformance README fixes: rotation, deal, passes (seat by seat, count before cards), plays.
    (A value a lenient read could not take stands as one these checks refuse: see
    :meth:`GameRecord.read`.)
    """
    rules = state.rules

    def deal(index: int) -> Deal:
        if index >= len(hands):
            raise RecordEnds
        hand = hands[index]
        direction = PassDirection.for_hand(index)
        if hand.dealer != rules.dealer(index) or hand.pass_direction != direction.value:
            raise BadRotation(
                f"hand {index} must be dealt by seat {rules.dealer(index)} and pass {direction.value}",
                hand=index,
            )
        kitty = _cards(hand.kitty, BadDeal, hand=index)
        return Deal([_cards(h, BadDeal, hand=index) for h in hand.deal], kitty)

    def passes(index: int) -> Iterator[Pass]:
        passed = hands[index].passes
        if len(passed) != rules.players:
            raise BadPass(f"expected a pass from each of the {rules.players} seats", hand=index)
        for seat, codes in enumerate(passed):
            if len(codes) != 3:
                raise BadPassCount(f"seat {seat} passed {len(codes)} cards", hand=index, seat=seat)
            yield Pass(seat, _cards(codes, PassNotInHand, hand=index, seat=seat))

    def play(index: int, seat: int) -> Play:
        plays = hands[index].plays
        i = len(state.plays)
        if i >= len(plays):
            raise Incomplete(f"the hand stops after {len(plays)} plays", hand=index, play=len(plays))
        try:
            card = Card.parse(plays[i])
        except ValueError as exc:
            raise NotInHand(str(exc), hand=index, play=i, seat=seat) from None
        total = rules.players * rules.hand_size
        if i == total - 1 and len(plays) > total:
            # The last card would finish the hand; report the extra plays as this hand's
            # error instead, so the hand does not count as completed.
            state.check_play(card)
            raise ExtraPlays(f"the hand ends after {total} plays", hand=index, play=total)
        return Play(seat, card)

    def answer(decision: Decision) -> Answer:
        kind, index = decision.kind, decision.hand_index
        if kind is DecisionKind.PLAY:
            return play(index, decision.seat)
        if kind is DecisionKind.PASS:
            return passes(index)
        if kind is DecisionKind.DEAL:
            return deal(index)
        return Moon(decision.seat, hands[index].moon_choice or DEFAULT_MOON_CHOICE.value)

    return answer


class RecordEnds(Exception):
    """The record has no further hand: replay stops there."""


def as_record(record: GameRecord | Mapping[str, Any]) -> GameRecord:
    """``record`` typed: a JSON object is read leniently (a replay judges what it finds wrong)."""
    return record if isinstance(record, GameRecord) else GameRecord.from_json(record, lenient=True).record


def read_for_replay(source: Path) -> GameRecord:
    """A record file as ``hearts replay`` reads it: leniently, so that an illegal record gets its
    verdict, but a problem no replay judges (a ``target_score`` that is not a number, a
    decision entry of the wrong shape, ...) is an error of the file.

    Raises:
        RecordFileError: naming the file, the field and why.
    """
    read = GameRecord.read(source, lenient=True)
    for problem in read.problems:
        if not problem.judged:
            raise RecordFileError(problem.reason, source=str(source), field=problem.field)
    return read.record


def replay(record: GameRecord | Mapping[str, Any]) -> dict[str, Any]:
    """Replays ``record`` and returns its outcome in the conformance ``expected`` format.

    An illegal record is not an exception: the outcome's ``error`` names the first illegal
    thing, and ``hands``/``totals`` hold what was completed before it. A JSON object (a
    conformance vector's ``record``) is read leniently first (:meth:`GameRecord.read`).
    """
    record = as_record(record)
    try:
        rules = rules_of(record)
    except BadPlayerCount as exc:
        return {"hands": [], "totals": [], "game_over": False, "winners": [], "error": exc.to_json()}
    except HeartsError as exc:
        return {
            "hands": [],
            "totals": [0] * record.players,
            "game_over": False,
            "winners": [],
            "error": exc.to_json(),
        }
    state = State(rules)
    hands = record.hands
    try:
        play_through(state, record_answers(state, hands))
        if len(state.results) < len(hands):
            raise GameAlreadyOver("the game was over before this hand", hand=len(state.results))
    except RecordEnds:
        pass
    except HeartsError as exc:
        outcome = outcome_of(state)
        outcome["game_over"] = False
        outcome["winners"] = []
        outcome["error"] = exc.to_json()
        return outcome
    return outcome_of(state)


def verify_seed(record: GameRecord) -> list[str]:
    """Checks a record's revealed seed against its commitment and its deals.

    Returns:
        Problems found, empty when the record carries no seed or everything matches.
    """
    seed = record.seed
    if seed is None:
        return []
    problems: list[str] = []
    if record.seed_commitment is not None and record.seed_commitment != seed_commitment(seed):
        problems.append("the revealed seed does not match its published commitment")
    try:
        rules = rules_of(record)
    except (HeartsError, ValueError):
        return problems
    for index, hand in enumerate(record.hands):
        deal, kitty = deal_hand(rules, seed, index)
        if not _same_deal(hand, deal, kitty):
            problems.append(f"hand {index} was not dealt from the revealed seed")
            break
    return problems


def _same_deal(hand: HandRecord, deal: Sequence[Sequence[Card]], kitty: Sequence[Card]) -> bool:
    try:
        got = [sorted(Card.parse(c) for c in h) for h in hand.deal]
        got_kitty = sorted(Card.parse(c) for c in hand.kitty)
    except ValueError:
        return False
    return got == [sorted(h) for h in deal] and got_kitty == sorted(kitty)
