"""The simulator (``hearts_client.sim``) against the referee engine ``hearts_core``, per backend.

Every test runs on the pure-Python fallback and, when it is built, on the native module
(:mod:`tests.helpers.sim_backends`): the conformance vectors, a lockstep differential test against
``hearts_core.State``, the RNG, clones, observations, ``VecGame``, and ``from_view`` /
``from_record`` round trips. The two backends are also compared with each other.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from hearts_client.sim import _build
from hearts_client.sim._python import Xoshiro, fast_deal, fnv1a
from hearts_core.cards import CARDS
from hearts_core.deal import deal_hand
from hearts_core.record import state_to_record
from hearts_core.replay import replay
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view
from tests.helpers.sim_backends import BACKENDS, backend

VECTORS = sorted((Path(__file__).parent / "conformance" / "vectors").glob("*.json"))


@pytest.fixture(params=BACKENDS)
def sim(request: pytest.FixtureRequest) -> ModuleType:
    return backend(request.param)


def test_every_conformance_vector_gives_its_outcome(sim: ModuleType) -> None:
    assert len(VECTORS) > 50
    illegal = 0
    for path in VECTORS:
        vector = json.loads(path.read_text())
        got = sim.replay(vector["record"])
        assert got == vector["expected"], path.name
        illegal += vector["expected"]["error"] is not None
    assert illegal >= 10  # the illegal vectors are there, and their codes matched


def test_illegal_actions_raise_the_vector_code_and_change_nothing(sim: ModuleType) -> None:
    # Every illegal-play vector: step to the offending card and apply it by hand.
    checked = 0
    for path in VECTORS:
        vector = json.loads(path.read_text())
        error = vector["expected"]["error"]
        if error is None or "play" not in error or error["code"] in ("INCOMPLETE", "EXTRA_PLAYS"):
            continue
        record = vector["record"]
        hand_index = error["hand"]
        hand = record["hands"][hand_index]
        game = sim.Game.from_record(record, hand_index)
        for seat, codes in enumerate(hand["passes"]):
            game.apply_pass(seat, [int(_card(c)) for c in codes])
        for code in hand["plays"][: error["play"]]:
            game.apply_action(int(_card(code)))
        before = (game.legal_actions(), [game.hand(s) for s in range(game.players)], game.trick())
        with pytest.raises(sim.IllegalAction) as caught:
            game.apply_action(int(_card(hand["plays"][error["play"]])))
        assert caught.value.code == error["code"], path.name
        assert isinstance(caught.value, ValueError)
        assert game.current_player == error["seat"]
        assert (game.legal_actions(), [game.hand(s) for s in range(game.players)], game.trick()) == before
        checked += 1
    assert checked >= 5


def _card(code: str) -> Any:
    from hearts_core.cards import Card

    return Card.parse(code)


def test_action_errors_outside_the_vectors(sim: ModuleType) -> None:
    game = sim.Game(8, "errors")
    with pytest.raises(sim.IllegalAction) as caught:
        game.apply_action(52)
    assert caught.value.code == "OUT_OF_TURN"
    # Not an action at all: a plain ValueError in both backends (not an IllegalAction).
    with pytest.raises(ValueError, match=r"0\.\.53") as caught:
        game.apply_action(99)
    assert not isinstance(caught.value, sim.IllegalAction)
    missing = next(c for c in range(52) if c not in game.hand(0))
    with pytest.raises(sim.IllegalAction) as caught:
        game.apply_action(missing)
    assert caught.value.code == "PASS_NOT_IN_HAND"
    with pytest.raises(sim.IllegalAction) as caught:
        game.apply_pass(0, game.hand(0)[:2])
    assert caught.value.code == "BAD_PASS_COUNT"
    # Any seat that has not passed may pass its three at once (as native); not twice.
    early = game.clone()
    early.apply_pass(1, early.hand(1)[:3])
    assert early.current_player == 0 and len(early.passed(1)) == 3 and len(early.hand(1)) == 10
    with pytest.raises(sim.IllegalAction) as caught:
        early.apply_pass(1, early.hand(1)[:3])
    assert caught.value.code == "OUT_OF_TURN"
    with pytest.raises(sim.IllegalAction) as caught:
        game.apply_moon(52)
    assert caught.value.code == "OUT_OF_TURN"
    assert game.phase == sim.PASS and game.current_player == 0 and len(game.hand(0)) == 13
    game.play_out("random", seed=1)
    assert game.is_over() and game.current_player == -1 and game.legal_actions() == []
    with pytest.raises(sim.IllegalAction) as caught:
        game.apply_action(0)
    assert caught.value.code == "OUT_OF_TURN"  # as native: no action is expected once over


# ------------------------------------------------------------------------------ lockstep
def _compare(game: Any, state: State) -> None:
    n = state.players
    assert game.hand_index == state.hand_index
    assert game.totals() == state.totals
    if state.phase is Phase.GAME_OVER:
        assert game.is_over()
        assert game.winners() == state.winners
        return
    for seat in range(n):
        assert game.hand(seat) == [int(c) for c in state.hands[seat]]
    if state.phase is Phase.PLAYING:
        assert game.phase == 1
        assert game.current_player == state.to_play
        assert game.legal_actions() == [int(c) for c in state.legal_plays()]
        assert game.trick() == [
            (state.current.seat_of(i, n), int(c)) for i, c in enumerate(state.current.cards)
        ]
        assert game.points() == state.points
        assert game.taken() == state.public_taken
        assert game.hearts_broken == state.hearts_broken
        assert game.trick_index == state.trick_index
        if state.tricks:
            final = state.tricks[-1]
            assert game.last_trick() == (final.leader, [int(c) for c in final.cards], final.winner)
        assert game.kitty_taker == state.kitty_taker
    elif state.phase is Phase.MOON_CHOICE:
        assert game.phase == 2 and game.current_player == state.moon_shooter


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_lockstep_with_hearts_core_at_every_step(sim: ModuleType) -> None:
    """2,000 random games of one to three hands at 6..11 players: the same at every decision."""
    rng = random.Random(2026)
    decisions = 0
    for index in range(2000):
        players = 6 + index % 6
        max_hands = 1 + index % 3
        target = rng.choice([30, 60, 150])
        seed = f"lock-{index}"
        rules = Rules(players, target_score=target, max_hands=max_hands)
        game = sim.Game(players, seed, target_score=target, max_hands=max_hands)
        state = State(rules)
        while not state.game_over:
            hands, kitty = deal_hand(rules, seed, state.hand_index + 1)
            state.start_hand(hands, kitty)
            assert sorted(game.kitty()) == [int(c) for c in kitty]
            _compare(game, state)
            for seat in range(players):
                assert game.current_player == seat and game.phase == 0
                chosen = []
                for _ in range(3):
                    legal = game.legal_actions()
                    assert legal == sorted(
                        {int(c) for c in state.hands[seat]} - _used(chosen, state.hands[seat])
                    )
                    card = rng.choice(legal)
                    chosen.append(card)
                    game.apply_action(card)
                state.pass_cards(seat, [CARDS[c] for c in chosen])
                assert sorted(game.passed(seat)) == sorted(chosen)
            while state.phase is Phase.PLAYING:
                _compare(game, state)
                card = rng.choice(game.legal_actions())
                state.play(CARDS[card])
                game.apply_action(card)
                decisions += 1
            if state.phase is Phase.MOON_CHOICE:
                _compare(game, state)
                choice = rng.choice(["self_minus_26", "others_plus_26"])
                state.choose_moon(choice)
                game.apply_action(52 if choice == "self_minus_26" else 53)
            assert game.hand_scores_history() == [r.scores for r in state.results]
            last, result = game.last_hand(), state.results[-1]
            assert last == {
                "index": result.index, "points": result.points, "scores": result.scores,
                "moon": result.moon, "uncollected": [int(c) for c in result.uncollected],
                "kitty_taker": result.kitty_taker,
            }  # fmt: skip
            final = result.tricks[-1]
            assert game.last_trick() == (final.leader, [int(c) for c in final.cards], final.winner)
            assert game.hand_index == state.hand_index + (0 if state.game_over else 1)
        _compare(game, state)
    assert decisions > 100_000


def _used(chosen: list[int], hand: Any) -> set[int]:
    # A card chosen once and held twice stays legal; held once, it is used up.
    return {c for c in chosen if chosen.count(c) >= hand.count(CARDS[c])}


# ------------------------------------------------------------------------------ deals and RNG
def test_deals_are_hearts_core_deals_from_the_seed(sim: ModuleType) -> None:
    for players in range(6, 12):
        for seed in (0, 7, "abc"):
            game = sim.Game(players, seed)
            hands, kitty = deal_hand(Rules(players), str(seed), 0)
            assert [game.hand(s) for s in range(players)] == [[int(c) for c in h] for h in hands]
            assert game.kitty() == [int(c) for c in kitty]
            assert game.dealer == 0 and game.current_player == 0


def test_rng_matches_the_documented_vectors() -> None:
    # The vectors of docs/SIMULATOR.md ("RNG"), which the native module reproduces.
    expected = {
        0: [0x53175D61490B23DF, 0x61DA6F3DC380D507, 0x5C0FDF91EC9A7BFC],
        1: [0xCFC5D07F6F03C29B, 0xBF424132963FE08D, 0x19A37D5757AAF520],
        -1: [0x56CCF8CE948E27B2, 0xE68588432E5A5B90, 0xE3E9B5A48119CA8B],
        12345: [0x8D948A82DEF8A568, 0x3477F953796702A0, 0x15CAA2FCE6DB8D69],
    }
    for seed, outputs in expected.items():
        rng = Xoshiro(seed)
        assert [rng.next() for _ in range(3)] == outputs
    # choose(n) = ((next() >> 32) * n) >> 32; pick_bit(mask) = the choose(popcount)-th lowest set bit.
    rng, twin = Xoshiro(5), Xoshiro(5)
    for n in (1, 3, 13, 54):
        assert rng.choose(n) == ((twin.next() >> 32) * n) >> 32
    mask = 0b1011_0110
    rng, twin = Xoshiro(9), Xoshiro(9)
    bits = [b for b in range(8) if mask >> b & 1]
    for _ in range(20):
        assert rng.pick_bit(mask) == bits[((twin.next() >> 32) * len(bits)) >> 32]
    assert fnv1a("") == 0xCBF29CE484222325 and fnv1a("a") == 0xAF63DC4C8601EC8C


def test_fast_deal_is_the_simulators_shuffle(sim: ModuleType) -> None:
    # deal="fast": hand k is fast_deal(players, fnv1a(seed), k), two decks in the right sizes.
    for players in (6, 8, 11):
        game = sim.Game(players, "fast", deal="fast")
        hands, kitty = fast_deal(players, fnv1a("fast"), 0)
        assert [game.hand(s) for s in range(players)] == hands and game.kitty() == kitty
        assert sorted(c for h in hands for c in h) + kitty != []
        assert sorted([*(c for h in hands for c in h), *kitty]) == sorted(list(range(52)) * 2)
        assert hands != [[int(c) for c in h] for h in deal_hand(Rules(players), "fast", 0)[0]]


def test_random_play_out_follows_the_documented_algorithm(sim: ModuleType) -> None:
    # play_out("random", seed) is acts[choose(len(acts))] at every action, nothing else, with
    # choose(n) = ((rng.next() >> 32) * n) >> 32 (the native pick_bit of the legal mask).
    for seed in (99, None):
        game = sim.Game(7, "doc", max_hands=2)
        mirror = sim.Game(7, "doc", max_hands=2)
        game.play_out("random", seed=seed)
        rng = Xoshiro(0 if seed is None else seed)  # a new game's play RNG is Xoshiro(0)
        while not mirror.is_over():
            acts = mirror.legal_actions()
            mirror.apply_action(acts[((rng.next() >> 32) * len(acts)) >> 32])
        assert game.totals() == mirror.totals()
        assert game.hand_scores_history() == mirror.hand_scores_history()


def test_play_out_and_clone_semantics(sim: ModuleType) -> None:
    game = sim.Game(8, 3)
    for _ in range(40):
        game.apply_action(game.legal_actions()[0])
    twin = game.clone()
    game.play_out("random")  # the game's own RNG, seeded from str(seed)
    twin.play_out("random")  # the clone copied it
    assert game.totals() == twin.totals()
    again = sim.Game(8, "3")
    for _ in range(40):
        again.apply_action(again.legal_actions()[0])
    again.play_out("random")
    assert again.totals() == game.totals()  # int and str seeds are one game
    a = sim.Game(8, 3)
    b = a.clone()
    a.play_out("random", seed=1)
    b.play_out("random", seed=2)
    assert a.hand_scores_history() != b.hand_scores_history()
    # The clone is independent: playing one leaves the other where it was.
    c = sim.Game(8, 3)
    d = c.clone()
    c.play_out("heuristic", hands=1)
    assert d.hand_index == 0 and d.phase == sim.PASS and c.hand_index == 1
    assert len(c.hand_scores_history()) == 1 and d.hand_scores_history() == []


def test_heuristic_play_out_matches_the_sdk_bots(sim: ModuleType) -> None:
    """play_out("heuristic") plays exactly the heuristic bots' game (pass, play and moon)."""
    from hearts_client.bots.heuristic import HeuristicBot
    from hearts_core.local import play_game

    for players in (6, 8, 11):
        rules = Rules(players, target_score=80)
        state = play_game(rules, f"heur-{players}", [HeuristicBot(s) for s in range(players)])
        game = sim.Game(players, f"heur-{players}", target_score=80)
        game.play_out("heuristic")
        assert game.hand_scores_history() == [r.scores for r in state.results]
        assert game.totals() == state.totals


def test_callable_policy_and_bad_policies(sim: ModuleType) -> None:
    game = sim.Game(6, 1, max_hands=1)
    game.play_out(lambda g: g.legal_actions()[-1])
    assert game.is_over()
    with pytest.raises(ValueError):
        sim.Game(6, 1).play_out("nonsense")
    with pytest.raises(sim.IllegalAction):
        sim.Game(6, 1).play_out(lambda g: 53)


# ------------------------------------------------------------------------------ observations
def test_observation_layout(sim: ModuleType) -> None:
    players = 8
    size = sim.obs_size(players)
    assert size == 320 + 60 * players == 800
    rules = Rules(players, max_hands=1)
    game = sim.Game(players, "obs", max_hands=1)
    rng = random.Random(5)
    buf = np.zeros(size, dtype=np.float32)
    steps = 0
    seen = dict.fromkeys(("passed", "received", "taker"), 0)
    while not game.is_over():
        me = game.current_player
        game.observation_into(me, buf)
        hand = game.hand(me)
        assert [buf[c] for c in range(52)] == [float(hand.count(c)) for c in range(52)]
        known = 156 + 59 * players
        assert list(buf[known : known + 52]) == [float(game.passed(me).count(c)) for c in range(52)]
        assert list(buf[known + 52 : known + 104]) == [float(game.received(me).count(c)) for c in range(52)]
        taker = game.kitty_taker
        kitty = buf[known + 104 : known + 104 + players]
        assert list(kitty) == [
            float(taker is not None and (taker - me) % players == r) for r in range(players)
        ]
        seen["passed"] += bool(game.passed(me))
        seen["received"] += bool(game.received(me))
        seen["taker"] += taker is not None
        tail = 260 + 60 * players
        legal = np.zeros(54, dtype=np.uint8)
        game.legal_mask_into(legal)
        assert list(buf[tail + 6 : tail + 60].astype(np.uint8)) == list(legal)
        assert list(np.flatnonzero(legal)) == game.legal_actions()
        assert game.legal_mask() == sum(1 << a for a in game.legal_actions())
        assert buf[tail + 2 + game.phase] == 1.0 and buf[tail + 2 : tail + 6].sum() == 1.0
        assert buf[tail + game.hand_index % 2] == 1.0 and buf[tail : tail + 2].sum() == 1.0
        sizes = [len(game.hand(s)) / 13 for s in range(players)]
        assert [buf[156 + 58 * players + (s - me) % players] for s in range(players)] == pytest.approx(sizes)
        for seat, card in game.trick():
            assert buf[156 + 52 * ((seat - me) % players) + card] == 1.0
        other = (me + 3) % players
        game.observation_into(other, buf)
        assert buf[tail + 6 : tail + 60].sum() == 0.0  # not its turn: no legal mask
        assert np.array_equal(game.observation(other), buf)
        game.apply_action(rng.choice(game.legal_actions()))
        steps += 1
    assert steps > 100 and min(seen.values()) > 10
    assert rules.hand_size == 13


# ------------------------------------------------------------------------------ VecGame
def test_vecgame_steps_into_arrays(sim: ModuleType) -> None:
    n, players = 16, 6
    vec = sim.VecGame(n, players, seed=4, max_hands=1)
    masks = np.zeros((n, 54), dtype=np.uint8)
    cur = np.zeros(n, dtype=np.int64)
    obs = np.zeros((n, sim.obs_size(players)), dtype=np.float32)
    rewards = np.zeros((n, players), dtype=np.float32)
    dones = np.zeros(n, dtype=np.uint8)
    sums = np.zeros((n, players), dtype=np.float64)
    rng = np.random.default_rng(0)
    first = sim.Game(players, "4/0/0", max_hands=1, deal="fast")  # VecGame's default deal
    finished = 0
    for _ in range(300):
        vec.current_players(cur)
        vec.legal_masks(masks)
        vec.observations(obs)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if finished == 0:
            assert cur[0] == first.current_player
            assert masks[0].tolist() == [first.legal_mask() >> a & 1 for a in range(54)]
            first.apply_action(int(actions[0]))
        vec.step(actions, rewards, dones)
        sums += rewards
        for i in np.flatnonzero(dones):
            if i == 0 and finished == 0:
                assert first.is_over()
                assert sums[0].tolist() == first.returns()
            finished += 1
            sums[i] = 0
    assert finished >= n
    assert vec.step_random(500) > 0


# ------------------------------------------------------------------------------ round trips
def test_from_view_with_the_true_world_is_the_true_game(sim: ModuleType) -> None:
    from hearts_client.sampler import World
    from hearts_core.cards import CardSet

    rng = random.Random(11)
    checked = 0
    for index in range(30):
        players = 6 + index % 6
        rules = Rules(players)
        state = State(rules)
        state.start_hand(*deal_hand(rules, f"fv-{index}", 0))
        for seat in range(players):
            state.pass_cards(seat, list(state.hands[seat])[:3])
        stop = rng.randrange(players * rules.hand_size)
        for _ in range(stop):
            state.play(rng.choice(state.legal_plays()))
        me = state.to_play
        view = build_view(state, me)
        world = World(hands=tuple(h.copy() for h in state.hands), kitty=CardSet(state.kitty))
        game = sim.Game.from_view(view, world)
        _compare(game, state)
        # Rebuilt from the hands after the passes (as native): only the seat's own pass is known.
        assert sorted(game.passed(me)) == sorted(int(c) for c in view.passed) and view.passed
        assert game.received(me) == sorted(int(c) for c in view.received) and view.received
        assert all(game.passed(s) == [] == game.received(s) for s in range(players) if s != me)
        # A sampled world: the seat's own position is exact.
        for sampled in _build.sample_worlds(view, 3, seed=index):
            guess = sim.Game.from_view(view, sampled)
            assert guess.current_player == me
            assert guess.legal_actions() == [int(c) for c in view.legal]
            assert guess.hand(me) == [int(c) for c in view.hand]
            assert guess.taken() == list(view.taken)
            own = np.zeros(sim.obs_size(players), dtype=np.float32)
            true = np.zeros(sim.obs_size(players), dtype=np.float32)
            guess.observation_into(me, own)
            game.observation_into(me, true)
            assert np.array_equal(own, true)  # the observation holds only what the seat knows
        checked += 1
    assert checked == 30


def test_from_view_observation_is_the_real_games(sim: ModuleType) -> None:
    """The seat's observation in its determinization with the true world is the one in the real
    game: what it passed and received and who took the kitty included."""
    from hearts_client.sampler import World
    from hearts_core.cards import CardSet

    rng = random.Random(12)
    for index in range(30):
        players = 6 + index % 6
        rules = Rules(players)
        seed = f"fvo-{index}"
        state = State(rules)
        state.start_hand(*deal_hand(rules, seed, 0))
        real = sim.Game(players, seed)
        for seat in range(players):
            cards = rng.sample(list(state.hands[seat]), 3)
            state.pass_cards(seat, cards)
            real.apply_pass(seat, [int(c) for c in cards])
        for _ in range(rng.randrange(players * rules.hand_size)):
            card = rng.choice(state.legal_plays())
            state.play(card)
            real.apply_action(int(card))
        me = state.to_play
        view = build_view(state, me)
        world = World(hands=tuple(h.copy() for h in state.hands), kitty=CardSet(state.kitty))
        rebuilt = sim.Game.from_view(view, world)
        assert np.array_equal(rebuilt.observation(me), real.observation(me)), index


def test_from_view_while_passing_applies_the_own_pass(sim: ModuleType) -> None:
    rules = Rules(6)
    state = State(rules)
    state.start_hand(*deal_hand(rules, "pv", 0))
    state.pass_cards(2, list(state.hands[2])[:3])
    view = build_view(state, 2)
    world = _build.sample_worlds(view, 1, seed=1)[0]
    game = sim.Game.from_view(view, world)
    assert sorted(game.passed(2)) == sorted(int(c) for c in view.passed)
    assert len(game.hand(2)) == rules.hand_size - 3 and game.phase == sim.PASS and game.current_player == 0


def test_from_record_round_trip(sim: ModuleType, tmp_path: Path) -> None:
    from hearts_client.bots.heuristic import HeuristicBot
    from hearts_core.local import play_game

    rules = Rules(9, target_score=120)
    state = play_game(rules, "rec", [HeuristicBot(s) for s in range(9)])
    record = state_to_record(state, seed="rec")
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    expected = replay(record)
    assert sim.replay(record) == expected
    for hand in range(len(state.results)):
        game = sim.Game.from_record(record if hand % 2 else path, hand)
        result = state.results[hand]
        assert game.hand_index == hand
        assert [game.hand(s) for s in range(9)] == [sorted(int(c) for c in h) for h in result.deal]
        assert game.totals() == [sum(r.scores[s] for r in state.results[:hand]) for s in range(9)]
        # The record's seed deals the next hands: playing on with the bots' policy goes the same way.
        game.play_out("heuristic")
        assert game.totals() == state.totals
    with pytest.raises(ValueError, match="hand"):
        sim.Game.from_record(record, len(state.results))


def test_from_hands_starts_a_hand_with_the_given_cards(sim: ModuleType) -> None:
    """``Game.from_hands`` (docs/SIMULATOR.md) on both backends: the start of any hand of a
    record, the same game as ``from_record`` gives; after the passes with ``passes``; and one
    BAD_DEAL error for cards that are not a deal."""
    from hearts_client.bots.heuristic import HeuristicBot
    from hearts_core.local import play_game

    rules = Rules(7, target_score=100)
    state = play_game(rules, "hands", [HeuristicBot(s) for s in range(7)])
    record = state_to_record(state, seed="hands")
    for index, result in enumerate(state.results):
        deal = [[int(c) for c in h] for h in result.deal]
        kitty = [int(c) for c in result.kitty]
        totals = [sum(r.scores[s] for r in state.results[:index]) for s in range(7)]
        game = sim.Game.from_hands(
            7, deal, kitty, hand_index=index, totals=totals, seed="hands", target_score=100
        )  # fmt: skip
        same = sim.Game.from_record(record, index)
        assert (game.hand_index, game.dealer, game.pass_direction, game.phase) == (
            same.hand_index, same.dealer, same.pass_direction, same.phase,
        )  # fmt: skip
        assert [game.hand(s) for s in range(7)] == [same.hand(s) for s in range(7)]
        assert game.kitty() == same.kitty() and game.totals() == same.totals()
        game.play_out("heuristic")
        same.play_out("heuristic")
        assert game.totals() == same.totals() == state.totals
    first = state.results[0]
    passes = [[int(c) for c in p] for p in first.passes]
    after = [sorted(int(c) for c in h) for h in first.deal]  # any cards will do: only the phase is checked
    game = sim.Game.from_hands(7, after, [int(c) for c in first.kitty], passes=passes)
    assert game.phase == 1 and game.current_player == 1  # the seat left of dealer 0 leads
    assert game.passed(0) == sorted(passes[0]) and game.received(1) == sorted(passes[0])
    short = [h[:-1] for h in after]
    for bad, match in (
        ((7, short, [int(c) for c in first.kitty]), "hands of"),
        ((7, [after[0]] * 7, [int(c) for c in first.kitty]), "more than twice"),
    ):
        with pytest.raises(ValueError, match=match) as caught:
            sim.Game.from_hands(*bad)
        assert getattr(caught.value, "code", None) == "BAD_DEAL"
    with pytest.raises(ValueError, match="totals"):
        sim.Game.from_hands(7, after, [int(c) for c in first.kitty], totals=[0, 0])


def test_backends_agree() -> None:
    """The native module and the fallback: the same play-outs, observations and legal sets."""
    native = backend("native")
    python = backend("python")
    for index in range(40):
        players = 6 + index % 6
        a = native.Game(players, index, max_hands=2)
        b = python.Game(players, index, max_hands=2)
        rng = random.Random(index)
        oa = np.zeros(python.obs_size(players), dtype=np.float32)
        ob = np.zeros(python.obs_size(players), dtype=np.float32)
        while not b.is_over():
            assert a.legal_actions() == b.legal_actions() and a.current_player == b.current_player
            seat = rng.randrange(players)
            a.observation_into(seat, oa)
            b.observation_into(seat, ob)
            assert np.array_equal(oa, ob)
            if rng.random() < 0.05:
                ca, cb = a.clone(), b.clone()
                ca.play_out("random")
                cb.play_out("random")
                assert ca.hand_scores_history() == cb.hand_scores_history()
                ca, cb = a.clone(), b.clone()
                ca.play_out("heuristic", hands=1)
                cb.play_out("heuristic", hands=1)
                assert ca.hand_scores_history() == cb.hand_scores_history()
            action = rng.choice(b.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
        assert a.totals() == b.totals() and a.winners() == b.winners()
    for deal in ("fast", "referee"):
        a, b = native.Game(9, "f", deal=deal), python.Game(9, "f", deal=deal)
        assert a.play_out("random", seed=3) == b.play_out("random", seed=3)
        assert a.hand_scores_history() == b.hand_scores_history()
        va, vb = (
            native.VecGame(8, 8, 5, max_hands=1, deal=deal),
            python.VecGame(8, 8, 5, max_hands=1, deal=deal),
        )
        xa = np.zeros((8, python.obs_size(8)), dtype=np.float32)
        xb = np.zeros((8, python.obs_size(8)), dtype=np.float32)
        ma = np.zeros((8, 54), dtype=np.uint8)
        mb = np.zeros((8, 54), dtype=np.uint8)
        va.observations(xa)
        vb.observations(xb)
        assert np.array_equal(xa, xb)
        assert va.step_random(400) == vb.step_random(400)
        va.observations(xa)
        vb.observations(xb)
        va.legal_masks(ma)
        vb.legal_masks(mb)
        assert np.array_equal(xa, xb) and np.array_equal(ma, mb)
        assert va.current_players() == vb.current_players()


def test_a_rollout_in_the_true_world_is_the_heuristic_bots_own_play(sim: ModuleType) -> None:
    """The montecarlo bot's rollout (``from_view``, a card, ``play_out("heuristic", hands=1)``) in
    the true world ends the hand as the SDK's heuristic bots do, playing on in ``hearts_core``."""
    from hearts_client.bot import moon_choice
    from hearts_client.bots.heuristic import HeuristicBot
    from hearts_client.sampler import World
    from hearts_core.cards import CardSet

    rng = random.Random(1)
    bot = HeuristicBot(0)
    compared = 0
    for index in range(30):
        players = 6 + index % 6
        rules = Rules(players)
        state = State(rules, totals=[rng.randrange(0, 140) for _ in range(players)])
        state.start_hand(*deal_hand(rules, f"parity-{index}", 0))
        for seat in range(players):
            state.pass_cards(seat, list(state.hands[seat])[:3])
        for _ in range(rng.randrange(players * rules.hand_size)):
            state.play(rng.choice(state.legal_plays()))
        view = build_view(state, state.to_play)
        world = World(hands=tuple(h.copy() for h in state.hands), kitty=CardSet(state.kitty))
        base = sim.Game.from_view(view, world)
        for card in view.legal:
            game = base.clone()
            game.apply_action(int(card))
            if game.hand_index == view.hand_index:  # else the card ended the hand (and dealt the next)
                game.play_out("heuristic", hands=1)
            real = state.copy()
            real.play(card)
            while real.phase is Phase.PLAYING:
                real.play(bot.choose_play(build_view(real, real.to_play)))
            if real.phase is Phase.MOON_CHOICE:
                assert real.moon_shooter is not None
                real.choose_moon(moon_choice(real.moon_shooter, real.totals, rules.target_score))
            result = real.results[-1]
            assert game.hand_scores_history()[-1] == result.scores, (index, card)
            assert game.last_hand()["points"] == result.points, (index, card)
            compared += 1
    assert compared > 100


def test_step_is_apply_action_then_legal_actions(sim: ModuleType) -> None:
    """The fast path ``step(a)``: the same game as ``apply_action(a)``, the legal actions after it."""
    rng = random.Random(21)
    for index in range(6):
        players = 6 + index
        a, b = sim.Game(players, index, max_hands=2), sim.Game(players, index, max_hands=2)
        legal = a.legal_actions()
        while not b.is_over():
            action = rng.choice(legal)
            wrong = next(x for x in range(54) if x not in legal)
            with pytest.raises(sim.IllegalAction) as caught:
                a.step(wrong)
            with pytest.raises(sim.IllegalAction) as expected:
                b.apply_action(wrong)
            assert caught.value.code == expected.value.code
            legal = a.step(action)
            b.apply_action(action)
            assert legal == b.legal_actions() and a.current_player == b.current_player
        assert a.is_over() and legal == [] and a.totals() == b.totals()
