"""One simulator API: the native module ``hearts_sim`` against the pure-Python fallback, member
by member.

``docs/SIMULATOR.md`` promises that both backends of ``hearts_client.sim`` have the same API
and give the same results, so that an author's search code written on one runs on the other.
This holds them to it:

* **The members.** The public members of a ``Game``, a ``VecGame`` and a raised
  ``IllegalAction`` are the same names on both, of the same kind (method, class method, or
  read-only attribute), each method with the same parameters (names, kinds, defaults).
* **The behaviour.** Every public member of ``Game`` and ``VecGame`` has an entry in
  :data:`GAME_PROBES` / :data:`VEC_PROBES` (a member without one fails the test), and each is
  exercised on both backends at once, on random games started every way a game starts
  (``Game(...)`` with either deal, ``Game.from_hands`` before and after the passes,
  ``Game.from_record``, ``Game.from_view``), read at every step and compared: same values, same
  errors (code, hand, play, seat).

Another implementation of the fallback (say, a thin layer over ``hearts_core``) is held to the
native module by this test alone.
"""

from __future__ import annotations

import ast
import inspect
import json
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.sampler import World
from hearts_client.sim import _build
from hearts_core.cards import CARDS, CardSet
from hearts_core.deal import deal_hand
from hearts_core.local import play_game
from hearts_core.record import state_to_record
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view
from tests.conftest import ROOT
from tests.helpers.sim_backends import backend

# ------------------------------------------------------------------------------ the members


def _public(obj: Any) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def _kind(obj: Any, name: str) -> str:
    """``"method"``, ``"classmethod"``, ``"read-only attribute"`` or ``"writable attribute"``."""
    static = inspect.getattr_static(type(obj), name, None)
    if isinstance(static, classmethod) or type(static).__name__ == "classmethod_descriptor":
        return "classmethod"
    if callable(static):
        return "method"
    try:
        setattr(obj, name, getattr(obj, name))
    except AttributeError:
        return "read-only attribute"
    return "writable attribute"


def _parameters(fn: Any) -> list[tuple[str, str, Any]]:
    """A callable's parameters as (name, kind, default), without ``self`` / ``cls``."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name in ("self", "cls"):
            continue
        kind = p.kind.name.replace("POSITIONAL_OR_KEYWORD", "POSITIONAL")
        out.append((p.name, kind, None if p.default is inspect.Parameter.empty else repr(p.default)))
    return out


def _raised(sim: ModuleType) -> Any:
    game = sim.Game(6, 1)
    try:
        game.apply_action(53)
    except sim.IllegalAction as exc:
        return exc
    raise AssertionError("a moon choice in the pass phase was accepted")


def _instances(sim: ModuleType) -> dict[str, Any]:
    return {"Game": sim.Game(7, "api"), "VecGame": sim.VecGame(2, 7, "api"), "IllegalAction": _raised(sim)}


def test_every_public_member_exists_on_both_backends_with_the_same_signature() -> None:
    native, python = backend("native"), backend("python")
    theirs, ours = _instances(native), _instances(python)
    for cls_name in ("Game", "VecGame", "IllegalAction"):
        a, b = theirs[cls_name], ours[cls_name]
        assert _public(a) == _public(b), (
            cls_name,
            f"native only: {sorted(_public(a) - _public(b))}",
            f"fallback only: {sorted(_public(b) - _public(a))}",
        )
        for name in sorted(_public(b)):
            where = f"{cls_name}.{name}"
            kind = _kind(b, name)
            assert _kind(a, name) == kind, (where, _kind(a, name), kind)
            if kind in ("method", "classmethod") and cls_name != "IllegalAction":
                assert _parameters(getattr(a, name)) == _parameters(getattr(b, name)), where
    for cls_name in ("Game", "VecGame"):
        constructor = (getattr(native, cls_name), getattr(python, cls_name))
        assert _parameters(constructor[0]) == _parameters(constructor[1]), cls_name
    # An IllegalAction is raised, not made by an author: its constructor is the backend's own,
    # and what it carries is compared on every error below.
    error = _raised(python)
    assert {"code", "message", "hand", "play", "seat"} <= _public(error)


def test_the_type_stub_declares_every_member() -> None:
    """``hearts_sim.pyi`` (what mypy and editors read) names exactly the native classes' members."""
    stub = ast.parse((ROOT / "clients" / "sim" / "python" / "hearts_sim.pyi").read_text())
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}
    for cls_name, instance in _instances(backend("native")).items():
        declared = {
            getattr(item, "name", None) or getattr(getattr(item, "target", None), "id", None)
            for item in classes[cls_name].body
        }
        public = {name for name in declared if name and not name.startswith("_")}
        inherited = _public(ValueError()) if cls_name == "IllegalAction" else set()
        assert public == _public(instance) - inherited, (cls_name, public ^ (_public(instance) - inherited))


# ------------------------------------------------------------------------------ the behaviour


class Pair:
    """The same game in both backends, driven together; every reading is compared."""

    def __init__(self, native: Any, python: Any, rng: random.Random, what: str) -> None:
        self.native, self.python, self.rng, self.what = native, python, rng, what
        self.steps = 0

    def same(self, read: Callable[[Any], Any], member: str) -> Any:
        """``read`` of both games (or the error it raises): equal, else the test fails."""
        a, b = _outcome(read, self.native), _outcome(read, self.python)
        assert _comparable(a) == _comparable(b), (self.what, self.steps, member, a, b)
        return b


def _outcome(read: Callable[[Any], Any], game: Any) -> Any:
    try:
        return read(game)
    except ValueError as exc:  # IllegalAction included: the same error, in the same place
        return ("raised", getattr(exc, "code", None), getattr(exc, "hand", None), getattr(exc, "play", None),
                getattr(exc, "seat", None))  # fmt: skip
    except IndexError:
        return ("raised", "IndexError")


def _comparable(value: Any) -> Any:
    """``value`` with its types: a list and a tuple of the same items differ, as int and float do."""
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.tolist())
    if isinstance(value, tuple | list):
        return (type(value).__name__, [_comparable(v) for v in value])
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, int | float | str | type(None)):
        return (type(value).__name__, value)
    return (type(value).__name__, repr(value))


def _buffer(size: int, dtype: Any) -> Callable[[Callable[[Any, Any], None]], Callable[[Any], Any]]:
    def wrap(write: Callable[[Any, Any], None]) -> Callable[[Any], Any]:
        def read(game: Any) -> Any:
            buf = np.zeros(size, dtype=dtype)
            write(game, buf)
            return buf

        return read

    return wrap


def _seat(pair: Pair) -> int:
    return pair.rng.randrange(pair.python.players)


def _on_clones(pair: Pair, member: str, act: Callable[[Any], Any]) -> None:
    """``act`` on a clone of each game, then the clones compared as games are."""
    clones = Pair(pair.native.clone(), pair.python.clone(), pair.rng, pair.what)
    clones.steps = pair.steps
    clones.same(act, member)
    _read_everything(clones)


def _attribute(name: str) -> Callable[[Pair], Any]:
    return lambda pair: pair.same(lambda g: getattr(g, name), name)


def _reader(name: str) -> Callable[[Pair], Any]:
    return lambda pair: pair.same(lambda g: getattr(g, name)(), f"{name}()")


def _of_seat(name: str) -> Callable[[Pair], Any]:
    """A reader of one seat, at a random seat and (now and then) at one past the last."""

    def probe(pair: Pair) -> None:
        seat = pair.python.players if pair.rng.random() < 0.05 else _seat(pair)
        pair.same(lambda g: getattr(g, name)(seat), f"{name}({seat})")

    return probe


def _hands(pair: Pair) -> None:
    for seat in range(pair.python.players):
        pair.same(lambda g: g.hand(seat), f"hand({seat})")  # noqa: B023 - called at once


def _observation_into(pair: Pair) -> None:
    seat = _seat(pair)
    pair.same(
        _buffer(pair.python.obs_size, np.float32)(lambda g, b: g.observation_into(seat, b)),
        "observation_into",
    )


def _legal_mask_into(pair: Pair) -> None:
    pair.same(_buffer(54, np.uint8)(lambda g, b: g.legal_mask_into(b)), "legal_mask_into")


def _now_and_then(pair: Pair) -> bool:
    """Whether a probe that clones the games runs at this step (a clone of the fallback's game
    is slow; every phase still meets each such probe many times over a run)."""
    return pair.rng.random() < 0.2


def _policy_action(pair: Pair) -> None:
    if not _now_and_then(pair):
        return
    for args in ((), ("heuristic",), ("random",), ("nobody",)):
        pair.same(lambda g: g.clone().policy_action(*args), f"policy_action{args}")  # noqa: B023


def _play_out(pair: Pair) -> None:
    if pair.rng.random() > 0.03:
        return
    _on_clones(pair, "play_out('heuristic', hands=1)", lambda g: g.play_out("heuristic", hands=1))
    _on_clones(pair, "play_out(seed=5)", lambda g: g.play_out(seed=5))
    _on_clones(pair, "play_out()", lambda g: g.play_out(hands=1))
    _on_clones(pair, "play_out(callable)", lambda g: g.play_out(lambda h: h.legal_actions()[-1], hands=1))
    pair.same(lambda g: g.clone().play_out("nobody"), "play_out('nobody')")
    pair.same(lambda g: g.clone().play_out(hands=0), "play_out(hands=0)")


def _clone(pair: Pair) -> None:
    if pair.rng.random() < 0.05:
        _on_clones(pair, "clone", lambda g: g.legal_actions() and g.apply_action(g.legal_actions()[0]))


def _illegal(name: str) -> Callable[[Pair], Any]:
    """An illegal action (and one outside 0..53): the same error, and nothing changes."""

    def probe(pair: Pair) -> None:
        legal = set(pair.python.legal_actions())
        wrong = pair.rng.choice([a for a in range(54) if a not in legal])
        pair.same(lambda g: getattr(g, name)(wrong), f"{name}({wrong}) (illegal)")
        pair.same(lambda g: getattr(g, name)(99), f"{name}(99)")

    return probe


def _apply_pass(pair: Pair) -> None:
    if not _now_and_then(pair):
        return
    seat = _seat(pair)
    pair.same(lambda g: g.clone().apply_pass(seat, g.hand(seat)[:3]), f"apply_pass({seat}, ...) on a clone")
    pair.same(lambda g: g.clone().apply_pass(seat, g.hand(seat)[:2]), f"apply_pass({seat}, two cards)")


def _apply_play(pair: Pair) -> None:
    if not _now_and_then(pair):
        return
    card = pair.rng.randrange(53)
    pair.same(lambda g: g.clone().apply_play(card), f"apply_play({card}) on a clone")


def _apply_moon(pair: Pair) -> None:
    if not _now_and_then(pair) and pair.python.phase != 2:
        return
    for choice in ("others_plus_26", 52, "sideways", 7):
        pair.same(lambda g: g.clone().apply_moon(choice), f"apply_moon({choice!r}) on a clone")  # noqa: B023


#: How each public member of ``Game`` is exercised: a function of the pair, called at every step
#: (readers; actions on clones, some now and then). ``None``: the member starts the games of the
#: runs below. The pair's own moves use ``step``, ``apply_action``, ``apply_pass``,
#: ``apply_play`` and ``apply_moon`` (:func:`_advance`).
GAME_PROBES: dict[str, Callable[[Pair], Any] | None] = {
    **{
        name: _attribute(name)
        for name in (
            "players", "seed", "target_score", "max_hands", "first_dealer", "phase",
            "current_player", "hand_index", "trick_index", "dealer", "pass_direction",
            "hearts_broken", "kitty_taker", "moon_shooter", "obs_size",
        )
    },
    **{
        name: _reader(name)
        for name in (
            "is_over", "legal_actions", "legal_mask", "kitty", "trick", "tricks", "points",
            "taken", "set_aside_points", "uncollected", "last_trick", "last_hand", "totals",
            "hand_scores_history", "returns", "winners",
        )
    },
    "hand": _hands,
    "passed": _of_seat("passed"),
    "received": _of_seat("received"),
    "observation": _of_seat("observation"),
    "observation_into": _observation_into,
    "legal_mask_into": _legal_mask_into,
    "policy_action": _policy_action,
    "play_out": _play_out,
    "clone": _clone,
    "apply_action": _illegal("apply_action"),
    "step": _illegal("step"),
    "apply_pass": _apply_pass,
    "apply_play": _apply_play,
    "apply_moon": _apply_moon,
    "from_hands": None,
    "from_record": None,
    "from_view": None,
}  # fmt: skip


def _read_everything(pair: Pair) -> None:
    for probe in GAME_PROBES.values():
        if probe is not None:
            probe(pair)


def _advance(pair: Pair) -> None:
    """One random legal move in both games: by ``step``, ``apply_action``, ``apply_pass`` or
    ``apply_play`` (the same move each way)."""
    game, rng = pair.python, pair.rng
    legal = game.legal_actions()
    how = rng.random()
    if game.phase == 0 and not game.passed(game.current_player) and how < 0.3:
        seat = game.current_player
        cards = rng.sample(game.hand(seat), 3)
        pair.same(lambda g: g.apply_pass(seat, cards), "apply_pass")
    elif game.phase == 1 and how < 0.3:
        card = rng.choice(legal)
        pair.same(lambda g: g.apply_play(card), "apply_play")
    elif game.phase == 2 and how < 0.5:
        choice = rng.choice(["self_minus_26", "others_plus_26", 52, 53])
        pair.same(lambda g: g.apply_moon(choice), "apply_moon")
    elif how < 0.6:
        action = rng.choice(legal)
        pair.same(lambda g: g.step(action), "step")
    else:
        action = rng.choice(legal)
        pair.same(lambda g: g.apply_action(action), "apply_action")
    pair.steps += 1


def _play_through(pair: Pair, limit: int = 10_000) -> int:
    while not pair.python.is_over() and pair.steps < limit:
        _read_everything(pair)
        _advance(pair)
    _read_everything(pair)
    return pair.steps


def _both(make: Callable[[ModuleType], Callable[..., Any]], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``make(module)(*args, **kwargs)`` in each backend, or the same error from both."""
    native, python = backend("native"), backend("python")
    a, b = (_outcome(lambda sim: make(sim)(*args, **kwargs), sim) for sim in (native, python))
    assert not isinstance(b, tuple) or b[0] != "raised" or a == b, (a, b)
    return a, b


def test_games_dealt_from_a_seed_behave_the_same_member_by_member() -> None:
    rng = random.Random(35)
    steps = 0
    for index in range(12):
        players = 6 + index % 6
        deal = "fast" if index % 3 == 2 else "referee"
        options = {
            "target_score": rng.choice([40, 150]),
            "max_hands": 1 + index % 3,
            "first_dealer": index % players,
        }
        a, b = _both(lambda sim: sim.Game, players, f"api-{index}", deal=deal, **options)
        steps += _play_through(Pair(a, b, rng, f"Game({players}, 'api-{index}', deal={deal!r})"))
    default = _both(lambda sim: sim.Game, 8)
    steps += _play_through(Pair(*default, rng, "Game(8)"), limit=150)
    assert steps > 2500


def _dealt(rules: Rules, seed: str, hand: int) -> tuple[list[list[int]], list[int]]:
    hands, kitty = deal_hand(rules, seed, hand)
    return [[int(c) for c in h] for h in hands], [int(c) for c in kitty]


def test_games_from_hands_behave_the_same_member_by_member() -> None:
    rng = random.Random(36)
    steps = 0
    for index in range(10):
        players = 6 + index % 6
        rules = Rules(players)
        hands, kitty = _dealt(rules, f"fh-{index}", index)
        totals = [rng.randrange(0, 120) for _ in range(players)]
        history = [[rng.randrange(0, 27) for _ in range(players)] for _ in range(index)]
        common = {"hand_index": index, "totals": totals, "seed": f"fh-{index}", "max_hands": index + 2}
        if index % 2:
            # After the passes: the hands as they are then, each seat's pass known or not.
            passes = [sorted(rng.sample(h, 3)) if rng.random() < 0.7 else [] for h in hands]
            made = _both(lambda sim: sim.Game.from_hands, players, hands, kitty, passes=passes, **common)
        else:
            made = _both(lambda sim: sim.Game.from_hands, players, hands, kitty, history=history, **common)
        steps += _play_through(Pair(*made, rng, f"from_hands #{index}"))
    assert steps > 1500


def test_bad_deals_are_refused_alike() -> None:
    hands, kitty = _dealt(Rules(7), "bad", 0)
    third = [[hands[0][0]] * 3 + hands[0][3:], *hands[1:]]
    cases: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("short hand", (7, [hands[0][:-1], *hands[1:]], kitty), {}),
        ("a third copy", (7, third, kitty), {}),
        ("not a card", (7, [[60, *hands[0][1:]], *hands[1:]], kitty), {}),
        ("kitty", (7, hands, []), {}),
        ("seats", (7, hands[:-1], kitty), {}),
        ("totals", (7, hands, kitty), {"totals": [0] * 6}),
        ("hand index", (7, hands, kitty), {"hand_index": -1}),
        ("passes", (7, hands, kitty), {"passes": [[1, 2]] * 7}),
        ("history", (7, hands, kitty), {"hand_index": 1, "history": [[0] * 6]}),
        ("players", (5, hands, kitty), {}),
    ]
    for what, args, kwargs in cases:
        native, python = _both(lambda sim: sim.Game.from_hands, *args, **kwargs)
        assert isinstance(python, tuple) and python[0] == "raised", (what, python)
        assert native == python, (what, native, python)


def test_games_from_records_behave_the_same_member_by_member() -> None:
    rng = random.Random(37)
    steps = 0
    for index in range(4):
        players = 6 + index
        rules = Rules(players, target_score=80)
        state = play_game(rules, f"rec-{index}", [HeuristicBot(s) for s in range(players)])
        record = json.loads(json.dumps(state_to_record(state, seed=f"rec-{index}")))
        for hand in (0, len(state.results) - 1):
            made = _both(lambda sim: sim.Game.from_record, record, hand)
            steps += _play_through(Pair(*made, rng, f"from_record hand {hand}"), limit=250)
    assert steps > 1500


def test_games_from_views_behave_the_same_member_by_member() -> None:
    rng = random.Random(39)
    steps = 0
    for index in range(6):
        players = 6 + index
        rules = Rules(players)
        state = State(rules)
        state.totals = [rng.randrange(0, 100) for _ in range(players)]
        state.start_hand(*deal_hand(rules, f"view-{index}", 0))
        if index % 3:
            for seat in range(players):
                state.pass_cards(seat, list(state.hands[seat])[:3])
            for _ in range(rng.randrange(players * rules.hand_size)):
                state.play(rng.choice(state.legal_plays()))
            me = state.to_play
        else:
            me = 0
            state.pass_cards(me, list(state.hands[me])[-3:])
        view = build_view(state, me)
        true = World(hands=tuple(h.copy() for h in state.hands), kitty=CardSet(state.kitty))
        for world in (true, *_build.sample_worlds(view, 2, seed=index)):
            made = _both(lambda sim: sim.Game.from_view, view, world)
            steps += _play_through(Pair(*made, rng, f"from_view #{index}"), limit=150)
        made = _both(lambda sim: sim.Game.from_view, view, true, seed="later")
        steps += _play_through(Pair(*made, rng, f"from_view #{index}, seed"), limit=150)
    assert steps > 2000


# ------------------------------------------------------------------------------ VecGame


def _vec_same(a: Any, b: Any, read: Callable[[Any], Any], member: str) -> None:
    x, y = _outcome(read, a), _outcome(read, b)
    assert _comparable(x) == _comparable(y), (member, x, y)


#: How each public member of ``VecGame`` is exercised on both backends (``n`` games of ``p`` seats).
VEC_PROBES: dict[str, Callable[[Any, Any, int, int], None]] = {
    **{
        name: (lambda m: lambda a, b, n, p: _vec_same(a, b, lambda v: getattr(v, m), m))(name)
        for name in ("num_games", "players", "obs_size")
    },
    "current_players": lambda a, b, n, p: (
        _vec_same(a, b, lambda v: v.current_players(), "current_players()"),
        _vec_same(a, b, _buffer(n, np.int64)(lambda v, o: v.current_players(o)), "current_players(out)"),
    ),
    "legal_masks": lambda a, b, n, p: _vec_same(
        a, b, lambda v: (o := np.zeros((n, 54), np.uint8), v.legal_masks(o))[0], "legal_masks"
    ),
    "observations": lambda a, b, n, p: _vec_same(
        a, b, lambda v: (o := np.zeros((n, a.obs_size), np.float32), v.observations(o))[0], "observations"
    ),
    "game": lambda a, b, n, p: _vec_same(
        a, b, lambda v: [v.game(i).legal_actions() for i in range(n)], "game"
    ),
    "step": lambda a, b, n, p: _vec_same(a, b, lambda v: _vec_step(v, n, p), "step"),
    "step_random": lambda a, b, n, p: _vec_same(a, b, lambda v: v.step_random(37), "step_random"),
    "reset": lambda a, b, n, p: None,  # at the end of the run below
}


def _vec_step(vec: Any, n: int, p: int) -> tuple[Any, ...]:
    masks = np.zeros((n, 54), np.uint8)
    vec.legal_masks(masks)
    actions = np.array([int(np.flatnonzero(row)[len(np.flatnonzero(row)) // 2]) for row in masks], np.int64)
    rewards, dones = np.zeros((n, p), np.float32), np.zeros(n, np.uint8)
    vec.step(actions, rewards, dones)
    return rewards, dones


def test_vecgames_behave_the_same_member_by_member() -> None:
    native, python = backend("native"), backend("python")
    assert set(VEC_PROBES) == _public(python.VecGame(1, 6))
    for n, p, deal in ((3, 6, "fast"), (2, 11, "referee")):
        a = native.VecGame(n, p, "vec", max_hands=1, deal=deal)
        b = python.VecGame(n, p, "vec", max_hands=1, deal=deal)
        for _ in range(60):
            for probe in VEC_PROBES.values():
                probe(a, b, n, p)
        a.reset()
        b.reset()
        VEC_PROBES["observations"](a, b, n, p)
        _vec_same(a, b, lambda v, k=n: v.step([60] * k), "step (not an action)")
        _vec_same(a, b, lambda v, k=n: v.game(k), "game (out of range)")


def test_every_game_member_has_a_probe() -> None:
    assert set(GAME_PROBES) == _public(backend("python").Game(6)), "a Game member without a probe here"


@pytest.mark.parametrize("name", ["native", "python"])
def test_the_hands_facts_are_hearts_cores(name: str) -> None:
    """``tricks()``, ``uncollected()`` and ``set_aside_points()`` against ``hearts_core`` itself,
    at every card of random hands (the member-by-member tests above then hold the backends to
    each other)."""
    sim = backend(name)
    rng = random.Random(38)
    checked = 0
    for index in range(40):
        players = 6 + index % 6
        rules = Rules(players, max_hands=1)
        hands, kitty = _dealt(rules, f"new-{index}", 0)
        game = sim.Game.from_hands(players, hands, kitty, max_hands=1)
        state = State(rules)
        state.start_hand(*deal_hand(rules, f"new-{index}", 0))
        for seat in range(players):
            cards = rng.sample(game.hand(seat), 3)
            game.apply_pass(seat, cards)
            state.pass_cards(seat, [CARDS[c] for c in cards])
        while state.phase is Phase.PLAYING:
            card = rng.choice(game.legal_actions())
            game.apply_action(card)
            state.play(CARDS[card])
            tricks = [
                (t.leader, [int(c) for c in t.cards], -1 if t.winner is None else t.winner)
                for t in state.tricks
            ]
            assert game.tricks() == tricks
            assert game.uncollected() == sorted(int(c) for c in state.pending)
            assert game.set_aside_points() == sum(c.points for c in state.public_waiting)
            checked += 1
    assert checked > 1000
