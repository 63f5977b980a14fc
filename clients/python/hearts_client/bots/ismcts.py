"""``ismcts``: information-set Monte Carlo tree search on the simulator, for every decision.

The strongest built-in, and the reference entrants are measured against (see
``docs/design/MONTECARLO.md`` for the choice and its measurements). It sees only its seat's View and
searches through :mod:`hearts_client.sim` (the native core when built):

* **Play** — single-observer ISMCTS over the seat's own decisions to the end of the hand. Each
  iteration takes a determinized world (below) and walks down a tree whose nodes are the seat's
  own successive decisions (an open-loop tree: a node is the sequence of the seat's own cards so
  far). At its own decisions it picks by UCB1 over the actions legal in this world, counting
  *availability* (how often an action was legal when its node was visited) as ISMCTS does;
  the other seats play the heuristic policy (the field's own policy, and the rollouts' policy
  of the ``montecarlo`` bot). Leaving the tree, the hand is rolled out with the heuristic. The
  value is the ``montecarlo`` bot's objective (points, or the placing in the endgame). The card
  most visited at the root is played. The first root visits go to every card on the *same*
  worlds, as flat Monte Carlo does, so that a small budget is no weaker than ``montecarlo``.
* **Worlds: a belief carried through the hand.** The seat keeps weighted worlds (deals of the
  unseen cards, :class:`~hearts_client.sampler.WorldSampler`, each held as a simulator game at
  the current position) from one of its play decisions to the next. At each decision the plays
  made since are applied to every kept world: a world in which a play is illegal (a card the
  seat could not hold, a void broken) is dropped, and a world in which another seat's play is
  not the heuristic's is weighted down by ``MISMATCH_WEIGHT`` (Bayesian inference of the hands
  under the model the search uses for the other seats). Fresh worlds, replayed from the start
  of the hand, top the belief up to its size, and the decision's worlds are drawn from it by
  weight.
* **Pass** — candidate passes (three of the seat's ``PASS_POOL`` most dangerous cards by the
  heuristic's ranking) are each played out over the same sampled worlds (others pass and play with the
  heuristic, the hand is rolled out with the heuristic), the lowest mean value wins; ties go to
  the heuristic's own pass.
* **Moon** — the choice of :func:`hearts_client.bot.moon_choice`: both options leave the same
  margin over the field, so it takes "others +26" only when that ends the game as a win.

Budget: ``iterations`` per play decision and ``pass_worlds`` worlds per pass candidate decide
how much it searches, so that it plays the same on any machine: its decisions are a function of
its seed and the views it is shown. The wall clock is only a safety stop (``safety_limit``
seconds, and ``TIME_LEFT_SHARE`` of the referee's ``time_left`` over gRPC), checked between
iterations; a decision it cuts short is counted in :attr:`IsmctsBot.cut_short` and logged,
since it plays weaker than the budget would.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from hearts_client._log import get_logger
from hearts_client.bot import Bot
from hearts_client.bots.heuristic import HeuristicBot, pass_danger
from hearts_client.bots.montecarlo import Objective
from hearts_client.sampler import World, WorldSampler
from hearts_client.sim import BACKEND, Game, IllegalAction
from hearts_core.cards import CARDS, Card, CardSet
from hearts_core.view import TrickView, View

#: Play-decision iterations by backend (each is one determinized descent plus rollout).
DEFAULT_ITERATIONS = 1000 if BACKEND == "native" else 200
#: Determinized worlds per play decision, cycled through by the iterations.
DEFAULT_WORLDS = 60 if BACKEND == "native" else 30
#: Worlds per pass candidate by backend.
DEFAULT_PASS_WORLDS = 150 if BACKEND == "native" else 8
#: The safety stop: seconds of wall clock after which a decision is cut short whatever its
#: budget (the referee's default limit is 1 s). The budgets keep decisions far below it on an
#: idle machine (docs/design/MONTECARLO.md); it fires only on a machine too loaded to answer in time.
DEFAULT_SAFETY_LIMIT = 0.8
#: Over gRPC the safety stop also comes at this share of the referee's ``time_left``: the rest
#: is the margin for answering (the last iteration, the reply's way back) on a loaded machine.
TIME_LEFT_SHARE = 0.4
#: How many of the heuristic's most dangerous cards the candidate passes are drawn from.
PASS_POOL = 8 if BACKEND == "native" else 6
#: Worlds kept in the belief per world drawn for a decision.
INFER_FACTOR = 4
#: The weight of a world per play of another seat that the heuristic would not have made in it.
MISMATCH_WEIGHT = 0.5
#: UCB1 exploration constant, in units of the objective's scale (26 points, or the endgame's 100).
EXPLORATION = 0.7
#: Worlds on which every root card is tried before the tree search proper.
FLAT_WORLDS = 10
#: Fewest worlds a decision cut short by the safety stop still draws.
MIN_WORLDS = 4

_LOG = get_logger("hearts_client.bots.ismcts")


def search_settings() -> dict[str, object]:
    """What decides how ``ismcts`` plays with its defaults: the backend and every budget and
    constant of its search. Benches record it beside their figures, so that a figure names the
    version of the bot it measured and runs of different versions are not pooled."""
    return {
        "backend": BACKEND,
        "iterations": DEFAULT_ITERATIONS,
        "worlds": DEFAULT_WORLDS,
        "pass_worlds": DEFAULT_PASS_WORLDS,
        "pass_pool": PASS_POOL,
        "infer_factor": INFER_FACTOR,
        "mismatch_weight": MISMATCH_WEIGHT,
        "exploration": EXPLORATION,
        "flat_worlds": FLAT_WORLDS,
    }


class _Node:
    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail: dict[int, int] = {}
        self.children: dict[int, _Node] = {}


class _Stop:
    """The safety stop of one decision: has the wall clock passed its limit?"""

    __slots__ = ("at", "clock", "fired", "start")

    def __init__(self, clock: Callable[[], float], limit: float | None) -> None:
        self.clock = clock
        self.start = clock()
        self.at = None if limit is None else self.start + limit
        self.fired = False

    def __call__(self) -> bool:
        if not self.fired and self.at is not None and self.clock() >= self.at:
            self.fired = True
        return self.fired


class _Belief:
    """The weighted worlds of one hand, each a game at the position after ``plays``."""

    __slots__ = ("games", "hand_index", "misses", "plays")

    def __init__(self, hand_index: int) -> None:
        self.hand_index = hand_index
        self.plays: list[tuple[int, int]] = []
        self.games: list[Game] = []
        self.misses: list[int] = []


class IsmctsBot(Bot):
    """Information-set MCTS for play, rollout-searched passes, the rational moon choice.

    Args:
        seed: Seeds world sampling; unless the safety stop fires, decisions are a function of
            the seed and the views.
        iterations: Play-decision iterations.
        worlds: Worlds drawn per play decision; iteration ``i`` plays on world ``i mod worlds``.
        pass_worlds: Worlds each candidate pass is tried on.
        safety_limit: Seconds of wall clock after which a decision is cut short (None: never,
            except at ``TIME_LEFT_SHARE`` of the referee's ``time_left``). Not a budget: see
            :attr:`cut_short`.
        infer: Weight the worlds by how well they explain the other seats' plays.
        clock: The wall clock the safety stop reads (``time.perf_counter`` by default).

    Attributes:
        decisions: Decisions searched (passes, and plays with more than one legal card).
        cut_short: Of those, the decisions the safety stop cut short: each is also logged
            (``ismcts_cut_short``) and played on the iterations done by then.

    Raises:
        ValueError: on a budget below 1 or a safety limit that is not positive.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | str | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        pass_worlds: int = DEFAULT_PASS_WORLDS,
        worlds: int = DEFAULT_WORLDS,
        safety_limit: float | None = DEFAULT_SAFETY_LIMIT,
        infer: bool = True,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(seed)
        if min(iterations, pass_worlds, worlds) < 1:
            raise ValueError(
                "iterations, pass_worlds and worlds must be at least 1, "
                f"not {iterations}, {pass_worlds}, {worlds}"
            )
        if safety_limit is not None and safety_limit <= 0:
            raise ValueError(f"safety_limit must be positive, not {safety_limit}")
        self.iterations = iterations
        self.worlds = worlds
        self.infer = infer
        self.pass_worlds = pass_worlds
        self.safety_limit = safety_limit
        self.clock = clock
        self.decisions = 0
        self.cut_short = 0
        self._heuristic = HeuristicBot(seed)
        self._belief: _Belief | None = None

    def reseed(self, seed: int | str) -> None:
        super().reseed(seed)
        self._heuristic.reseed(seed)
        self._belief = None

    def _stop(self) -> _Stop:
        limit = self.safety_limit
        if self.time_left is not None:
            share = TIME_LEFT_SHARE * self.time_left
            limit = min(limit, share) if limit is not None else share
        # The default clock is looked up at each decision, so that a test may stand in for it.
        return _Stop(self.clock or time.perf_counter, limit)

    def _searched(self, stop: _Stop, decision: str, done: int, budget: int) -> None:
        # Counts one searched decision, and one cut short if the safety stop fired in it.
        self.decisions += 1
        if stop.fired:
            self.cut_short += 1
            _LOG.warning(
                "ismcts_cut_short",
                decision=decision,
                done=done,
                budget=budget,
                seconds=round(stop.clock() - stop.start, 3),
                cut_short=self.cut_short,
                decisions=self.decisions,
            )

    # ------------------------------------------------------------------------------ pass
    def choose_pass(self, view: View) -> Sequence[Card]:
        favourite = [int(c) for c in self._heuristic.choose_pass(view)]
        cards = list(view.hand)
        counts = Counter(c.suit for c in cards)
        ranked = sorted(cards, key=lambda c: (pass_danger(c, counts), c), reverse=True)
        pool = [int(c) for c in ranked[:PASS_POOL]]
        candidates: list[tuple[int, ...]] = []
        for combo in itertools.combinations(range(len(pool)), 3):
            cand = tuple(sorted(pool[i] for i in combo))
            if cand not in candidates:
                candidates.append(cand)
        fav = tuple(sorted(favourite))
        if fav in candidates:
            candidates.remove(fav)
        candidates.insert(0, fav)
        if len(candidates) == 1:
            return [CARDS[c] for c in favourite]
        stop = self._stop()
        sampler = WorldSampler(view)
        value = Objective(view)
        me = view.seat
        sums = [0.0] * len(candidates)
        tried = [0] * len(candidates)
        worlds = 0
        for world_index in range(self.pass_worlds):
            base = Game.from_view(view, sampler.sample(self.rng))
            for index, cand in enumerate(candidates):
                game = base.clone()
                # The seat's candidate first (any seat may pass before its turn), then the
                # others' passes and the whole hand by the heuristic, inside the simulator.
                game.apply_pass(me, list(cand))
                game.play_out("heuristic", hands=1)
                sums[index] += value.of_scores(game.hand_scores_history()[-1])
                tried[index] += 1
                if world_index and stop():
                    break
            worlds += 1
            if stop():
                break
        self._searched(stop, "pass", worlds, self.pass_worlds)
        # Means over the worlds each candidate was tried on (the last world may be partial).
        best = min(range(len(candidates)), key=lambda i: (sums[i] / max(tried[i], 1), i))
        return [CARDS[c] for c in candidates[best]]

    # ------------------------------------------------------------------------------ play
    def choose_play(self, view: View) -> Card:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        stop = self._stop()
        value = Objective(view)
        scale = 100.0 if value.endgame else 26.0
        c = EXPLORATION * scale
        me = view.seat
        root = _Node()
        candidates = [int(card) for card in legal]
        # The decision's worlds, cycled through: a world costs far more to draw than to clone,
        # so iteration i plays on a clone of world i mod the pool's size.
        pool = self._draw(view, max(1, min(self.worlds, self.iterations)), stop)
        size = len(pool)
        if not size:  # no world could be drawn (see _fill): the heuristic's card
            self._searched(stop, "play", 0, self.iterations)
            return self._heuristic.choose_play(view)
        mine = len(view.hand)

        done = 0
        flat = 0
        tree = False
        # First every card on the same worlds (flat Monte Carlo's common random numbers), then
        # descents of the tree chosen by UCB1.
        while done < self.iterations:
            if flat < FLAT_WORLDS:
                for card in candidates:
                    game = pool[flat % size].clone()
                    child = root.children.get(card)
                    if child is None:
                        child = root.children[card] = _Node()
                    root.avail[card] = root.avail.get(card, 0) + 1
                    game.apply_action(card)
                    path = [root, child]
                    self._descend(game, me, mine - 1, child, path, c, first=False)
                    self._backup(path, value.of_scores(game.hand_scores_history()[-1]))
                    done += 1
                    if flat and stop():
                        break
                flat += 1
            else:
                tree = True
                game = pool[done % size].clone()
                path = [root]
                self._descend(game, me, mine, root, path, c, first=True)
                self._backup(path, value.of_scores(game.hand_scores_history()[-1]))
                done += 1
            if stop():
                break
        self._searched(stop, "play", done, self.iterations)
        favourite = int(self._heuristic.choose_play(view))

        def mean(a: int) -> float:
            node = root.children.get(a)
            return node.total / node.visits if node is not None and node.visits else math.inf

        if not tree:
            # Stopped while trying every card on common worlds: compare their means.
            best = min(candidates, key=lambda a: (mean(a), a != favourite))
        else:
            best = max(candidates, key=lambda a: (root.children[a].visits, -mean(a), a == favourite))
        return CARDS[best]

    def _draw(self, view: View, size: int, stop: _Stop) -> list[Game]:
        """``size`` games at the view's position, drawn from the hand's belief by weight.

        The belief keeps ``INFER_FACTOR * size`` worlds (``size`` without inference, or before
        another seat has played). Kept
        worlds are brought up to date with the plays made since the seat's last decision
        (dropped where a play is illegal, weighted down by ``MISMATCH_WEIGHT`` for each play of
        another seat with a choice that the heuristic would not have made); fresh worlds from
        :class:`WorldSampler` fill it up, replayed from the start of the hand to be weighted
        alike. Against heuristic-like seats this is Bayesian inference of their hands; against
        others every world has misses and the weighting fades towards uniform sampling. Once
        the safety stop fires it stops filling up, keeping at least ``MIN_WORLDS``.
        """
        me = view.seat
        played = [(seat, int(card)) for seat, card in view.played_cards()]
        belief = self._belief
        if (
            belief is None
            or belief.hand_index != view.hand_index
            or belief.plays != played[: len(belief.plays)]
        ):
            belief = self._belief = _Belief(view.hand_index)
        fresh = played[len(belief.plays) :]
        if fresh:
            games: list[Game] = []
            misses: list[int] = []
            for game, missed in zip(belief.games, belief.misses, strict=True):
                more = self._replay(game, fresh, me)
                if more >= 0:
                    games.append(game)
                    misses.append(missed + more)
            belief.games, belief.misses = games, misses
        belief.plays = played
        # Nothing to weight by before another seat has played: then ``size`` worlds do.
        learns = self.infer and any(seat != me for seat, _ in played)
        target = INFER_FACTOR * size if learns else size
        if len(belief.games) < target:
            self._fill(view, belief, target, stop)
        if not self.infer or not any(belief.misses):
            return belief.games[:size] if len(belief.games) >= size else list(belief.games)
        weights = [MISMATCH_WEIGHT**m for m in belief.misses]
        return self.rng.choices(belief.games, weights=weights, k=min(size, len(belief.games)))

    def _fill(self, view: View, belief: _Belief, target: int, stop: _Stop) -> None:
        # Tops the belief up to ``target`` worlds drawn from the sampler.
        me = view.seat
        played = belief.plays
        sampler = WorldSampler(view)
        others_chose = self.infer and any(seat != me for seat, _ in played)
        start: View | None = None
        if others_chose and view.current is not None:
            n = view.players
            first_leader = view.tricks[0].leader if view.tricks else view.current.leader
            start = replace(
                view,
                hand=view.hand | CardSet(CARDS[c] for s, c in played if s == me),
                tricks=(),
                current=TrickView(first_leader, (), None, False),
                to_play=first_leader,
                hearts_broken=False,
                hand_sizes=(view.rules.hand_size,) * n,
                kitty_taker=None,
                taken=(0,) * n,
                set_aside=(),
                legal=(),
            )
        refused = 0
        while len(belief.games) < target:
            if len(belief.games) >= MIN_WORLDS and stop():
                break
            world = sampler.sample(self.rng)
            if start is None:
                belief.games.append(Game.from_view(view, world))
                belief.misses.append(0)
                continue
            hands = [h.copy() for h in world.hands]
            for seat, card in played:
                hands[seat].add(CARDS[card])
            game = Game.from_view(start, World(hands=tuple(hands), kitty=world.kitty))
            missed = self._replay(game, played, me)
            if missed < 0:
                # Never, for a world consistent with the View; if it were not, leave it out
                # rather than weight it (and stop drawing such worlds for ever).
                refused += 1
                if refused > target:
                    break
                continue
            belief.games.append(game)
            belief.misses.append(missed)

    def _replay(self, game: Game, plays: Sequence[tuple[int, int]], me: int) -> int:
        """Applies ``plays`` to ``game``; the other seats' choices the heuristic would not make.

        Returns -1, with the game left part-way, if a play is illegal in this world.
        """
        misses = 0
        infer = self.infer
        for seat, card in plays:
            if infer and seat != me:
                mask = game.legal_mask()
                if mask & (mask - 1) and game.policy_action("heuristic") != card:
                    misses += 1
            try:
                game.apply_action(card)
            except IllegalAction:
                return -1
        return misses

    @staticmethod
    def _backup(path: list[_Node], v: float) -> None:
        for node in path:
            node.visits += 1
            node.total += v

    @staticmethod
    def _descend(
        game: Game, me: int, mine: int, node: _Node, path: list[_Node], c: float, first: bool
    ) -> None:
        # Walks the game to the end of its hand (``mine``: the cards the seat still holds): the
        # tree at the seat's own real choices, the heuristic for everyone else and, once a new
        # node is added, for the seat too.
        hand = game.hand_index
        expanded = not first and node.visits == 0
        while mine and not expanded:
            if game.current_player != me:
                game.apply_action(game.policy_action("heuristic"))
                continue
            legal = game.legal_actions()
            mine -= 1
            if len(legal) == 1:
                game.apply_action(legal[0])
                continue
            avail = node.avail
            for a in legal:
                avail[a] = avail.get(a, 0) + 1
            children = node.children
            untried = [a for a in legal if a not in children]
            if untried:
                preferred = game.policy_action("heuristic")
                action = preferred if preferred in untried else untried[0]
                child = children[action] = _Node()
                expanded = True
            else:
                best_score = -math.inf
                action = legal[0]
                for a in legal:
                    ch = children[a]
                    score = -ch.total / ch.visits + c * math.sqrt(math.log(avail[a]) / ch.visits)
                    if score > best_score:
                        best_score, action = score, a
                child = children[action]
            game.apply_action(action)
            path.append(child)
            node = child
        # The rest of the hand (and a moon shooter's choice), all by the heuristic, unless the
        # seat's last card ended it.
        if game.hand_index == hand and not game.is_over():
            game.play_out("heuristic", hands=1)
