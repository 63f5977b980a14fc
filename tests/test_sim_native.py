"""The native simulator (``hearts_sim``, Rust, clients/sim) against the referee's engine.

``hearts_core`` is the oracle: every conformance vector gives the same outcome line as
``hearts replay``; random games in lockstep with ``hearts_core.State`` at 6..11 players give the
same seat to act, legal sets, trick winners, points, totals, kitty and moon at every step, and the
same error code for illegal actions; the seeded deal is the referee's; the heuristic policy is the
SDK's heuristic bot, decision for decision (the Rust port held to the one Python policy). The
module must also be the build of the sources in the tree (``BUILD_ID``).
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hearts_client.bot import moon_choice
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.sampler import World
from hearts_core.cards import CARDS, CardSet
from hearts_core.deal import deal_hand
from hearts_core.errors import HeartsError
from hearts_core.record import state_to_record
from hearts_core.replay import replay
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view
from tests.conftest import ROOT

try:
    import hearts_sim
except ImportError:  # every test skips, which fails the run under CI=true (tests/conftest.py)
    hearts_sim = None


@pytest.fixture(autouse=True)
def _native_module() -> None:
    if hearts_sim is None:
        pytest.skip("the native simulator hearts_sim is not installed (make install builds it)")


SIM = ROOT / "clients" / "sim"
VECTORS = sorted((ROOT / "tests" / "conformance" / "vectors").glob("*.json"))
PLAY_CODES = {
    "BAD_PASS_COUNT",
    "PASS_NOT_IN_HAND",
    "NOT_IN_HAND",
    "FIRST_LEAD_RESTRICTED",
    "HEARTS_NOT_BROKEN",
    "MUST_FOLLOW_SUIT",
    "BAD_MOON_CHOICE",
}


def build_id() -> str:
    """The hash build.rs embeds: every .rs, Cargo.toml and Cargo.lock under clients/sim."""
    digest = hashlib.sha256()
    paths = [
        p
        for p in SIM.rglob("*")
        if p.is_file()
        and (p.suffix == ".rs" or p.name in ("Cargo.toml", "Cargo.lock"))
        and not any(part == "target" or part.startswith(".") for part in p.relative_to(SIM).parts)
    ]
    for path in sorted(paths, key=lambda p: p.relative_to(SIM).as_posix()):
        digest.update(path.relative_to(SIM).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def test_the_installed_module_is_built_from_the_sources_in_the_tree() -> None:
    assert build_id() == hearts_sim.BUILD_ID, "hearts_sim is stale: run `make install` to rebuild clients/sim"


# ------------------------------------------------------------------ conformance vectors
def test_every_vector_prints_the_line_hearts_replay_prints() -> None:
    run = subprocess.run(
        [str(Path(sys.executable).parent / "hearts"), "replay", *map(str, VECTORS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = run.stdout.splitlines()
    assert len(lines) == len(VECTORS) >= 59
    for path, line in zip(VECTORS, lines, strict=True):
        assert hearts_sim.replay_json(path.read_text()) == line, path.name
        vector = json.loads(path.read_text())
        assert hearts_sim.replay(vector["record"]) == vector["expected"] == replay(vector["record"]), (
            path.name
        )


def _drive_record(record: dict[str, Any]) -> str | None:
    """Plays a record's hands through the Game API; the first IllegalAction's code, or None."""
    game = hearts_sim.Game.from_record(record, 0)
    for index, hand in enumerate(record["hands"]):
        assert game.hand_index == index
        assert [game.hand(s) for s in range(game.players)] == [
            sorted(CARDS.index(_card(c)) for c in h) for h in hand["deal"]
        ]
        try:
            for seat, cards in enumerate(hand["passes"]):
                game.apply_pass(seat, [_card(c) for c in cards])
            for code in hand["plays"]:
                game.apply_play(_card(code))
            if game.phase == hearts_sim.MOON:
                game.apply_moon(hand.get("moon_choice", "self_minus_26"))
        except hearts_sim.IllegalAction as exc:
            return str(exc.code)
        if game.is_over():
            break
    return None


def _card(code: str) -> int:
    from hearts_core.cards import Card

    try:
        return int(Card.parse(code))
    except ValueError:
        return 99  # not a card: the engine answers NOT_IN_HAND / PASS_NOT_IN_HAND


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_every_playable_vector_through_the_game_api(path: Path) -> None:
    vector = json.loads(path.read_text())
    error = vector["expected"]["error"]
    if error is not None and error["code"] not in PLAY_CODES:
        assert hearts_sim.replay(vector["record"])["error"] == error  # a record-level error
        return
    got = _drive_record(vector["record"])
    assert got == (error["code"] if error else None)


# ------------------------------------------------------------------ the seeded deal
def test_deals_are_the_referees_for_many_seeds_and_every_player_count() -> None:
    rng = random.Random(7)
    for players in range(6, 12):
        rules = Rules(players)
        for i in range(60):
            seed: str | int = rng.choice([i, f"{rng.getrandbits(128):032x}", f"game/{i}", ""])
            hand = rng.randrange(0, 300)
            hands, kitty = deal_hand(rules, str(seed), hand)
            got_hands, got_kitty = hearts_sim.deal_hand(players, seed, hand)
            assert got_hands == [[int(c) for c in h] for h in hands]
            assert got_kitty == [int(c) for c in kitty]
        game = hearts_sim.Game(players, "same")
        assert [game.hand(s) for s in range(players)] == [
            [int(c) for c in h] for h in deal_hand(rules, "same", 0)[0]
        ]


# ------------------------------------------------------------------ lockstep with hearts_core
def _compare(game: Any, state: State) -> None:
    n = state.players
    assert game.hand_index == state.hand_index
    assert game.totals() == state.totals
    assert game.points() == state.points
    assert game.hearts_broken == state.hearts_broken
    assert game.kitty_taker == state.kitty_taker
    assert game.kitty() == sorted(int(c) for c in state.kitty)
    if state.phase is Phase.PLAYING:
        assert game.phase == hearts_sim.PLAY
        assert game.current_player == state.to_play
        assert game.legal_actions() == [int(c) for c in state.legal_plays()]
        assert game.trick_index == len(state.tricks)
        assert game.trick() == [
            (state.current.seat_of(i, n), int(c)) for i, c in enumerate(state.current.cards)
        ]
        assert game.taken() == state.public_taken
    elif state.phase is Phase.MOON_CHOICE:
        assert game.phase == hearts_sim.MOON
        assert game.current_player == state.moon_shooter == game.moon_shooter
        assert game.legal_actions() == [hearts_sim.MOON_SELF_MINUS_26, hearts_sim.MOON_OTHERS_PLUS_26]
    elif state.phase is Phase.GAME_OVER:
        assert game.is_over() and game.phase == hearts_sim.OVER and game.current_player == -1
        assert game.winners() == state.winners
        assert game.legal_actions() == []


def _finish_check(game: Any, state: State) -> None:
    result = state.results[-1]
    last = game.last_hand()
    assert last["points"] == result.points
    assert last["scores"] == result.scores
    assert last["moon"] == result.moon
    assert last["uncollected"] == [int(c) for c in result.uncollected]
    assert last["kitty_taker"] == result.kitty_taker
    assert game.hand_scores_history() == [r.scores for r in state.results]


def _lockstep(
    players: int,
    seed: str,
    rng: random.Random,
    *,
    target: int,
    max_hands: int,
    heuristic: bool,
    record_check: bool = False,
) -> int:
    """One random (or heuristic) game in both engines; returns the decisions compared."""
    rules = Rules(players, target_score=target, max_hands=max_hands, first_dealer=rng.randrange(players))
    game = hearts_sim.Game(
        players, seed, target_score=target, max_hands=max_hands, first_dealer=rules.first_dealer
    )
    state = State(rules)
    decisions = 0
    while not state.game_over:
        state.start_hand(*deal_hand(rules, seed, state.hand_index + 1))
        assert [game.hand(s) for s in range(players)] == [sorted(int(c) for c in h) for h in state.hands]
        for seat in range(players):
            assert game.phase == hearts_sim.PASS and game.current_player == seat
            view = build_view(state, seat)
            chosen: list[int] = []
            for k in range(3):
                if heuristic:
                    card = game.policy_action("heuristic")
                    assert card == int(HeuristicBot().choose_pass(view)[k])
                else:
                    card = rng.choice(game.legal_actions())
                held = CardSet(state.hands[seat])
                for c in chosen:
                    held.remove(CARDS[c])
                assert game.legal_actions() == sorted({int(c) for c in held})
                game.apply_action(card)
                chosen.append(card)
                decisions += 1
            state.pass_cards(seat, [CARDS[c] for c in chosen])
        assert [game.hand(s) for s in range(players)] == [sorted(int(c) for c in h) for h in state.hands]
        hand_index = state.hand_index
        while state.hand_index == hand_index and state.phase is not Phase.DEALING and not state.game_over:
            _compare(game, state)
            if state.phase is Phase.MOON_CHOICE:
                shooter = state.moon_shooter
                assert shooter is not None
                if heuristic:
                    wanted = moon_choice(shooter, state.totals, rules.target_score)
                    action = 53 if wanted is MoonChoice.OTHERS_PLUS_26 else 52
                    assert game.policy_action("heuristic") == action
                else:
                    action = rng.choice([52, 53])
                game.apply_action(action)
                state.choose_moon(MoonChoice.OTHERS_PLUS_26 if action == 53 else MoonChoice.SELF_MINUS_26)
                decisions += 1
                break
            if rng.random() < 0.15:  # an illegal try: the same code, nothing changes
                card = rng.randrange(52)
                if card not in game.legal_actions():
                    with pytest.raises(HeartsError) as oracle:
                        state.play(CARDS[card])
                    with pytest.raises(hearts_sim.IllegalAction) as native:
                        game.apply_action(card)
                    assert native.value.code == oracle.value.code
                    _compare(game, state)
            if heuristic:
                card = int(HeuristicBot().choose_play(build_view(state, state.to_play)))
                assert game.policy_action("heuristic") == card
            else:
                card = rng.choice(game.legal_actions())
            tricks = len(state.tricks)
            game.apply_action(card)
            state.play(CARDS[card])
            decisions += 1
            if len(state.tricks) > tricks:
                done = state.tricks[-1]
                assert game.last_trick() == (done.leader, [int(c) for c in done.cards], done.winner)
        if state.results and state.results[-1].index == hand_index:
            _finish_check(game, state)
    _compare(game, state)
    if record_check:
        record = state_to_record(state, seed=seed)
        assert hearts_sim.replay(record) == replay(record)
        assert hearts_sim.replay_json(json.dumps(record)) == json.dumps(replay(record), separators=(",", ":"))
    return decisions


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_thousand_random_games_in_lockstep_with_hearts_core() -> None:
    rng = random.Random(2026)
    decisions = 0
    for i in range(2000):
        players = 6 + i % 6
        decisions += _lockstep(
            players,
            f"lockstep/{i}",
            rng,
            target=rng.choice([30, 60, 150]),
            max_hands=1 + i % 2,
            heuristic=False,
            record_check=i % 10 == 0,
        )
    assert decisions > 2000 * 100


def test_the_heuristic_policy_is_the_sdks_decision_for_decision() -> None:
    rng = random.Random(5)
    for i in range(60):
        _lockstep(6 + i % 6, f"heuristic/{i}", rng, target=150, max_hands=2, heuristic=True)


def test_moon_hands_score_both_ways_as_the_oracle() -> None:
    moons = [p for p in VECTORS if "-moon-" in p.name]
    assert len(moons) >= 6
    for path in moons:
        vector = json.loads(path.read_text())
        assert _drive_record(vector["record"]) is None
        assert hearts_sim.replay(vector["record"]) == vector["expected"]


# ------------------------------------------------------------------ the API
def test_an_illegal_action_raises_with_its_code_and_changes_nothing() -> None:
    game = hearts_sim.Game(8, 3)
    assert issubclass(hearts_sim.IllegalAction, ValueError)
    absent = next(c for c in range(52) if c not in game.hand(0))
    before = (game.hand(0), game.current_player, game.legal_actions())
    with pytest.raises(hearts_sim.IllegalAction) as err:
        game.apply_action(absent)
    assert err.value.code == "PASS_NOT_IN_HAND" and err.value.seat == 0
    assert (game.hand(0), game.current_player, game.legal_actions()) == before
    with pytest.raises(hearts_sim.IllegalAction) as err:
        game.apply_action(hearts_sim.MOON_SELF_MINUS_26)
    assert err.value.code == "OUT_OF_TURN"
    with pytest.raises(hearts_sim.IllegalAction) as err:
        game.apply_pass(1, game.hand(1)[:2])
    assert err.value.code == "BAD_PASS_COUNT"
    with pytest.raises(ValueError, match=r"an action is 0\.\.53"):
        game.apply_action(54)
    with pytest.raises(ValueError, match="6 to 11 players"):
        hearts_sim.Game(5)


def test_clone_is_deep_and_copies_the_generator() -> None:
    game = hearts_sim.Game(7, "clone")
    game.play_out("random", seed=9, hands=1)
    twin = game.clone()
    game.play_out("random")
    twin.play_out("random")
    assert twin.totals() == game.totals() and twin.hand_scores_history() == game.hand_scores_history()
    other = game.clone()
    assert other.is_over() and other.returns() == [-float(t) for t in game.totals()]
    fresh = hearts_sim.Game(7, "clone")
    copy = fresh.clone()
    copy.apply_action(copy.legal_actions()[0])
    assert fresh.hand(0) != copy.hand(0) and len(fresh.hand(0)) == 14


def test_play_out_named_and_callable_policies() -> None:
    a = hearts_sim.Game(9, "po", max_hands=3)
    steps = a.play_out("heuristic")
    assert a.is_over() and a.hand_index == 2 and steps >= 3 * (9 * 3 + 9 * 11)
    b = hearts_sim.Game(9, "po", max_hands=3)
    b.play_out(lambda g: g.policy_action("heuristic"))
    assert b.totals() == a.totals()
    c = hearts_sim.Game(9, "po", max_hands=3)
    c.play_out("random", seed=1, hands=1)
    assert c.hand_index == 1 and c.phase == hearts_sim.PASS and len(c.hand_scores_history()) == 1
    with pytest.raises(ValueError, match="unknown policy"):
        c.play_out("greedy")
    with pytest.raises(hearts_sim.IllegalAction):
        c.play_out(lambda g: next(x for x in range(52) if x not in g.legal_actions()))


def test_long_native_loops_release_the_gil() -> None:
    # With a huge switch interval no thread is ever forced to give the GIL up: the waiting
    # thread can run during the call only if the call itself releases the GIL, and it cannot
    # run between the call's return and the check that follows.
    calls = [
        lambda: hearts_sim.play_random_hands(8, 200_000, 3),
        lambda: hearts_sim.Game(8, "gil", max_hands=20_000, target_score=10**9).play_out("random", seed=1),
        lambda: hearts_sim.VecGame(64, 8, "gil").step_random(3_000),
    ]
    # Seeing the waiting thread run during a call proves the release (without it, it never
    # can); not seeing it once could only mean the thread got no CPU on a loaded machine, so
    # each call is tried up to 20 times, and the verdict never depends on the machine's speed.
    interval = sys.getswitchinterval()
    try:
        sys.setswitchinterval(1000.0)
        for call in calls:
            seen = 0
            for _ in range(20):
                go = threading.Event()
                ran: list[int] = []
                waiter = threading.Thread(target=lambda ran=ran, go=go: (go.wait(), ran.append(1)))
                waiter.start()
                go.set()
                call()
                seen = len(ran)
                waiter.join()
                if seen:
                    break
            assert seen == 1
    finally:
        sys.setswitchinterval(interval)


def test_a_rust_panic_is_a_python_exception() -> None:
    from hearts_sim import hearts_sim as native

    with pytest.raises(BaseException, match="deliberate panic"):
        native._panic_for_test()
    assert hearts_sim.Game(6).players == 6  # the interpreter lives on


def test_observation_layout() -> None:
    np = pytest.importorskip("numpy", reason="numpy is a dependency of the dev install")
    n = 8
    game = hearts_sim.Game(n, "obs")
    for _ in range(40):
        game.apply_action(game.legal_actions()[-1])
    seat = game.current_player
    obs = np.zeros(hearts_sim.obs_size(n), dtype=np.float32)
    game.observation_into(seat, obs)
    assert obs.shape[0] == 320 + 60 * n == game.obs_size
    counts = np.zeros(52)
    for c in game.hand(seat):
        counts[c] += 1
    assert (obs[:52] == counts).all()
    base = 260 + 60 * n
    assert list(np.flatnonzero(obs[base + 6 :])) == game.legal_actions()
    assert obs[base + 2 + game.phase] == 1.0
    trick = game.trick()
    for r in range(n):
        block = obs[156 + 52 * r : 156 + 52 * (r + 1)]
        played = [c for s, c in trick if (s - seat) % n == r]
        assert list(np.flatnonzero(block)) == played
    assert (game.observation(seat) == obs).all()
    mask = np.zeros(54, dtype=np.bool_)
    game.legal_mask_into(mask)
    assert list(np.flatnonzero(mask)) == game.legal_actions()
    assert game.legal_mask() == sum(1 << a for a in game.legal_actions())
    with pytest.raises(ValueError, match="54 are needed"):
        game.legal_mask_into(np.zeros(10, dtype=np.uint8))


def test_vecgame_steps_like_separate_games() -> None:
    np = pytest.importorskip("numpy", reason="numpy is a dependency of the dev install")
    num, n = 16, 6
    vec = hearts_sim.VecGame(num, n, "vec", max_hands=1)
    games = [hearts_sim.Game(n, f"vec/{i}/0", max_hands=1, deal="fast") for i in range(num)]
    episodes = [0] * num
    masks = np.zeros((num, 54), dtype=np.uint8)
    seats = np.zeros(num, dtype=np.int64)
    rewards = np.zeros((num, n), dtype=np.float32)
    dones = np.zeros(num, dtype=np.uint8)
    obs = np.zeros((num, vec.obs_size), dtype=np.float32)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        vec.legal_masks(masks)
        vec.current_players(seats)
        vec.observations(obs)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        for i, g in enumerate(games):
            assert list(np.flatnonzero(masks[i])) == g.legal_actions() and seats[i] == g.current_player
            single = np.zeros(vec.obs_size, dtype=np.float32)
            g.observation_into(g.current_player, single)
            assert (single == obs[i]).all()
        vec.step(actions, rewards, dones)
        for i, g in enumerate(games):
            g.apply_action(int(actions[i]))
            if g.is_over():
                assert dones[i] == 1 and list(rewards[i]) == [-s for s in g.hand_scores_history()[-1]]
                finished += 1
                episodes[i] += 1
                games[i] = hearts_sim.Game(n, f"vec/{i}/{episodes[i]}", max_hands=1, deal="fast")
            else:
                assert dones[i] == 0 and not rewards[i].any()
    assert finished >= num
    vec.legal_masks(masks)
    bad = np.array([np.flatnonzero(m)[0] for m in masks], dtype=np.int64)
    bad[0] = next(a for a in range(54) if not masks[0][a])
    with pytest.raises(hearts_sim.IllegalAction, match="game 0"):
        vec.step(bad)
    assert vec.step_random(500) >= 1


def test_the_fast_deal_is_two_full_decks_and_reproducible() -> None:
    for players in range(6, 12):
        game = hearts_sim.Game(players, "fast", deal="fast")
        cards = sorted(c for s in range(players) for c in game.hand(s)) + game.kitty()
        assert sorted(cards) == sorted(list(range(52)) * 2)
        assert game.hand(0) == hearts_sim.Game(players, "fast", deal="fast").hand(0)
        assert game.hand(0) != hearts_sim.Game(players, "fast").hand(0)
    with pytest.raises(ValueError, match="deal must be"):
        hearts_sim.Game(8, deal="quick")


def test_from_record_starts_any_hand() -> None:
    path = next(p for p in VECTORS if "game-8p-random" in p.name)
    vector = json.loads(path.read_text())
    record, expected = vector["record"], vector["expected"]
    for k in (0, 1, len(record["hands"]) - 1):
        game = hearts_sim.Game.from_record(record, k)
        assert game.hand_index == k
        assert game.totals() == [sum(h["scores"][s] for h in expected["hands"][:k]) for s in range(8)]
        assert game.dealer == record["hands"][k]["dealer"]
    assert hearts_sim.Game.from_record(path, 1).totals() == hearts_sim.Game.from_record(record, 1).totals()


def test_from_view_rebuilds_the_game_a_world_describes() -> None:
    rng = random.Random(11)
    for i in range(30):
        players = 6 + i % 6
        rules = Rules(players)
        state = State(rules)
        state.start_hand(*deal_hand(rules, f"fv/{i}", 0))
        stop = rng.randrange(0, players * rules.hand_size)
        for seat in range(players):
            if i % 5 == 0 and seat == 0:
                break  # a view from the passing phase
            state.pass_cards(seat, list(state.hands[seat])[:3])
        for _ in range(stop if state.phase is Phase.PLAYING else 0):
            state.play(rng.choice(state.legal_plays()))
        seat = state.to_play if state.phase is Phase.PLAYING else 0
        view = build_view(state, seat)
        world = World(tuple(h.copy() for h in state.hands), CardSet(state.kitty))
        game = hearts_sim.Game.from_view(view, world)
        if state.phase is Phase.PASSING:
            assert game.phase == hearts_sim.PASS and game.hand(1) == sorted(int(c) for c in state.hands[1])
            continue
        _compare(game, state)
        while state.phase is Phase.PLAYING:
            card = rng.choice(game.legal_actions())
            game.apply_action(card)
            state.play(CARDS[card])
            if state.phase is Phase.DEALING:
                _finish_check(game, state)
            else:
                _compare(game, state)


def test_sample_worlds_draws_the_python_samplers_worlds_from_the_same_seed() -> None:
    from hearts_client.sampler import WorldSampler

    rng = random.Random(21)
    compared = 0
    for i in range(240):
        players = 6 + i % 6
        rules = Rules(players)
        state = State(rules)
        state.start_hand(*deal_hand(rules, f"worlds/{i}", i % 2))
        passing_view = i % 8 == 0
        for seat in range(players):
            if passing_view and seat == 2:
                break
            state.pass_cards(seat, rng.sample(list(state.hands[seat]), 3))
        if not passing_view:
            for _ in range(rng.randrange(players * rules.hand_size)):
                state.play(rng.choice(state.legal_plays()))
        seat = state.to_play if state.phase is Phase.PLAYING else rng.randrange(players)
        view = build_view(state, seat)
        seed: int | str = rng.choice([i, f"seed-{i}", -i])
        native = hearts_sim.sample_worlds(view, 12, seed)
        sampler, stream = WorldSampler(view), random.Random(seed)
        python = [sampler.sample(stream) for _ in range(12)]
        assert native == python, (i, seed)
        for game, world in zip(hearts_sim.sample_games(view, 12, seed), python, strict=True):
            rebuilt = hearts_sim.Game.from_view(view, world)
            assert [game.hand(s) for s in range(players)] == [rebuilt.hand(s) for s in range(players)]
            assert game.kitty() == rebuilt.kitty() == sorted(int(c) for c in world.kitty)
            assert (game.phase, game.current_player, game.legal_actions(), game.points()) == (
                rebuilt.phase,
                rebuilt.current_player,
                rebuilt.legal_actions(),
                rebuilt.points(),
            )
        compared += len(native)
    assert compared == 240 * 12
    with pytest.raises(ValueError, match="no hand in progress"):
        hearts_sim.sample_worlds(build_view(State(Rules(6)), 0), 1, 0)
