"""Games built from outside facts for the pure-Python backend: records, Views and worlds.

Everything here stands on the fallback's :class:`Game` primitives (``from_hands``,
``apply_pass``, ``apply_play``) and on ``hearts_core`` (the native module builds the same games
in Rust, and ``tests/test_sim_api.py`` holds the two to each other):

* :func:`from_record` is the start of one hand of a record, its earlier hands replayed by
  ``hearts_core.replay``;
* :func:`from_view` is a determinization: a full game consistent with one seat's View, the
  hidden cards placed as a sampled :class:`~hearts_client.sampler.World` says;
* :func:`sample_worlds` draws such worlds (:class:`~hearts_client.sampler.WorldSampler`), for
  both backends.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from hearts_client.sampler import World, WorldSampler
from hearts_core.errors import HeartsError
from hearts_core.record import GameRecord
from hearts_core.replay import as_record, record_answers, replay, rules_of
from hearts_core.state import Deal, Decision, DecisionKind, Phase, State
from hearts_core.view import View

G = TypeVar("G")


def from_record(game_cls: type[G], record: GameRecord | Mapping[str, Any] | str | Path, hand: int = 0) -> G:
    """The start of hand ``hand`` of ``record`` (typed, its JSON object, or a record / vector file's path).

    The deal is the record's; the totals and ``hand_scores_history()`` are those of the
    record's earlier hands, replayed by ``hearts_core.replay``; later hands are dealt from the
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
    earlier = replay(dataclasses.replace(record, hands=record.hands[:hand]))
    if earlier["error"] is not None:
        raise ValueError(f"the record is illegal before hand {hand}: {earlier['error']}")
    if earlier["game_over"]:
        raise ValueError(f"the record's game was over before hand {hand}")
    try:
        rules = rules_of(record)
        # The hand's deal, checked as a replay checks it (rotation, then the cards).
        deal = record_answers(State(rules), record.hands)(Decision(DecisionKind.DEAL, (), hand))
        assert isinstance(deal, Deal)
        return game_cls.from_hands(  # type: ignore[attr-defined,no-any-return]
            rules.players, [[int(c) for c in h] for h in deal.hands], [int(c) for c in deal.kitty],
            hand_index=hand, totals=earlier["totals"], seed=record.seed or "",
            target_score=rules.target_score, max_hands=rules.max_hands, first_dealer=rules.first_dealer,
            history=[h["scores"] for h in earlier["hands"]],
        )  # fmt: skip
    except (HeartsError, ValueError) as exc:
        raise ValueError(f"hand {hand} of the record is illegal: {exc}") from None


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
