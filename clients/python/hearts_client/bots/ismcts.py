"""``ismcts``: information-set Monte Carlo tree search on the simulator, for every decision.

The strongest built-in (see ``docs/design/MONTECARLO.md`` for the choice and its measurements). It sees
only its seat's View and searches through :mod:`hearts_client.sim` (the native core when built):

* **Play** — single-observer ISMCTS over the seat's own decisions to the end of the hand. Each
  iteration samples a world consistent with the View (:class:`~hearts_client.sampler.WorldSampler`),
  determinizes it (``Game.from_view``) and walks down a tree whose nodes are the seat's own
  successive decisions (an open-loop tree: a node is the sequence of the seat's own cards so
  far). At its own decisions it picks by UCB1 over the actions legal in this world, counting
  *availability* (how often an action was legal when its node was visited) as ISMCTS does;
  the other seats play the heuristic policy (the field's own policy, and the rollouts' policy
  of the ``montecarlo`` bot). Leaving the tree, the hand is rolled out with the heuristic. The
  value is the ``montecarlo`` bot's objective (points, or the placing in the endgame). The card
  most visited at the root is played. The first root visits go to every card on the *same*
  worlds, as flat Monte Carlo does, so that a small budget is no weaker than ``montecarlo``.
* **Pass** — candidate passes (three of the seat's ``PASS_POOL`` most dangerous cards by the
  heuristic's ranking) are each played out over the same sampled worlds (others pass and play with the
  heuristic, the hand is rolled out with the heuristic), the lowest mean value wins; ties go to
  the heuristic's own pass.
* **Moon** — the choice of :func:`hearts_client.bot.moon_choice`: both options leave the same
  margin over the field, so it takes "others +26" only when that ends the game as a win.

Budget: ``iterations`` per play decision and ``pass_worlds`` worlds per pass candidate, each
capped by ``time_limit`` seconds (and by half the referee's ``time_left`` over gRPC), checked
between iterations. The defaults suit the backend: the native core affords many more
iterations than the Python fallback in the same time.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from hearts_client.bot import Bot
from hearts_client.bots.heuristic import HeuristicBot, pass_danger
from hearts_client.bots.montecarlo import Objective
from hearts_client.sampler import World, WorldSampler
from hearts_client.sim import BACKEND, PLAY, Game
from hearts_core.cards import CARDS, Card, CardSet
from hearts_core.view import TrickView, View

#: Play-decision iterations by backend (each is one determinized descent plus rollout).
DEFAULT_ITERATIONS = 1000 if BACKEND == "native" else 200
#: Determinized worlds per play decision, cycled through by the iterations.
DEFAULT_WORLDS = 60 if BACKEND == "native" else 30
#: Worlds per pass candidate by backend.
DEFAULT_PASS_WORLDS = 60 if BACKEND == "native" else 8
#: Seconds per decision at most (the referee's default limit is 1 s).
DEFAULT_TIME_LIMIT = 0.4
#: How many of the heuristic's most dangerous cards the candidate passes are drawn from.
PASS_POOL = 7 if BACKEND == "native" else 6
#: Worlds sampled per world kept when inferring hands from the other seats' plays.
INFER_FACTOR = 4
#: The weight of a world per play of another seat that the heuristic would not have made in it.
MISMATCH_WEIGHT = 0.25
#: UCB1 exploration constant, in units of the objective's scale (26 points, or the endgame's 100).
EXPLORATION = 0.7


class _Node:
    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail: dict[int, int] = {}
        self.children: dict[int, _Node] = {}


class IsmctsBot(Bot):
    """Information-set MCTS for play, rollout-searched passes, the rational moon choice.

    Args:
        seed: Seeds world sampling; with the iteration budgets deciding (no time cap reached),
            decisions are a function of the seed and the views.
        iterations: Play-decision iterations (at most).
        worlds: Sampled worlds per play decision; iteration ``i`` plays on world ``i mod worlds``.
        pass_worlds: Worlds each candidate pass is tried on (at most).
        time_limit: Seconds per decision at most (None: the budgets alone).
        infer: Weight the sampled worlds by how well they explain the other seats' plays.

    Raises:
        ValueError: on a budget below 1 or a time limit that is not positive.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | str | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        pass_worlds: int = DEFAULT_PASS_WORLDS,
        worlds: int = DEFAULT_WORLDS,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        infer: bool = True,
    ) -> None:
        super().__init__(seed)
        if min(iterations, pass_worlds, worlds) < 1:
            raise ValueError(
                "iterations, pass_worlds and worlds must be at least 1, "
                f"not {iterations}, {pass_worlds}, {worlds}"
            )
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time_limit must be positive, not {time_limit}")
        self.iterations = iterations
        self.worlds = worlds
        self.infer = infer
        self.pass_worlds = pass_worlds
        self.time_limit = time_limit
        self._heuristic = HeuristicBot(seed)

    def reseed(self, seed: int | str) -> None:
        super().reseed(seed)
        self._heuristic.reseed(seed)

    def _limit(self) -> float | None:
        limit = self.time_limit
        if self.time_left is not None:
            limit = min(limit, self.time_left / 2) if limit is not None else self.time_left / 2
        return limit

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
        start = time.perf_counter()
        limit = self._limit()
        sampler = WorldSampler(view)
        value = Objective(view)
        me = view.seat
        sums = [0.0] * len(candidates)
        tried = [0] * len(candidates)
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
                if world_index and limit is not None and time.perf_counter() - start >= limit:
                    break
            if limit is not None and time.perf_counter() - start >= limit:
                break
        # Means over the worlds each candidate was tried on (the last world may be partial).
        best = min(range(len(candidates)), key=lambda i: (sums[i] / max(tried[i], 1), i))
        return [CARDS[c] for c in candidates[best]]

    # ------------------------------------------------------------------------------ play
    def choose_play(self, view: View) -> Card:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        limit = self._limit()
        sampler = WorldSampler(view)
        value = Objective(view)
        scale = 100.0 if value.endgame else 26.0
        c = EXPLORATION * scale
        me = view.seat
        root = _Node()
        candidates = [int(card) for card in legal]
        # A pool of determinized worlds, cycled through: sampling a world costs far more than
        # cloning its game, so iteration i plays on a clone of world i mod the pool size.
        pool: list[Game] = []
        size = max(1, min(self.worlds, self.iterations))

        deadline = None if limit is None else start + limit / 3
        drawn = self._infer(view, sampler, size, deadline) if self.infer else None
        if drawn is not None:
            size = len(drawn)

        def world(i: int) -> Game:
            while len(pool) <= i % size:
                found = drawn[len(pool)] if drawn is not None else sampler.sample(self.rng)
                pool.append(Game.from_view(view, found))
            return pool[i % size].clone()

        done = 0
        flat = 0
        tree = False
        # First every card on the same worlds (flat Monte Carlo's common random numbers), then
        # descents of the tree chosen by UCB1.
        while done < self.iterations:
            if flat < _FLAT_WORLDS:
                for card in candidates:
                    game = world(flat)
                    child = root.children.get(card)
                    if child is None:
                        child = root.children[card] = _Node()
                    root.avail[card] = root.avail.get(card, 0) + 1
                    game.apply_action(card)
                    path = [root, child]
                    self._select(game, me, child, path, c, first=False)
                    self._backup(path, value.of_scores(game.hand_scores_history()[-1]))
                    done += 1
                    if flat and limit is not None and time.perf_counter() - start >= limit:
                        break
                flat += 1
            else:
                tree = True
                game = world(done)
                path = [root]
                self._select(game, me, root, path, c, first=True)
                self._backup(path, value.of_scores(game.hand_scores_history()[-1]))
                done += 1
            if limit is not None and time.perf_counter() - start >= limit:
                break
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

    def _infer(
        self, view: View, sampler: WorldSampler, size: int, deadline: float | None
    ) -> list[World] | None:
        """``size`` worlds drawn by how well they explain the other seats' plays so far.

        ``INFER_FACTOR`` times ``size`` worlds are sampled; each is replayed from the start of the
        hand's play, and at every earlier decision of another seat that had a choice, the
        heuristic policy's card in that world is compared with the card actually played. A world
        is weighted by ``MISMATCH_WEIGHT`` to the number of mismatches, and the pool is drawn
        from the candidates by weight: against seats that play like the heuristic this is
        Bayesian inference of their hands; against others it fades towards uniform sampling.
        Returns None when there is nothing to learn yet (no play by another seat with a choice).
        Past ``deadline`` (a ``time.perf_counter()`` value) it stops sampling candidates, keeping
        at least a few, and returns fewer worlds.
        """
        played = view.played_cards()
        me = view.seat
        if not any(seat != me for seat, _ in played) or view.current is None:
            return None
        n = view.players
        first_leader = view.tricks[0].leader if view.tricks else view.current.leader
        start = replace(
            view,
            hand=view.hand | CardSet(c for s, c in played if s == me),
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
        candidates: list[World] = []
        weights = []
        while len(candidates) < INFER_FACTOR * size:
            if deadline is not None and len(candidates) >= 4 and time.perf_counter() >= deadline:
                break
            world = sampler.sample(self.rng)
            candidates.append(world)
            hands = [h.copy() for h in world.hands]
            for seat, card in played:
                hands[seat].add(card)
            game = Game.from_view(start, World(hands=tuple(hands), kitty=world.kitty))
            misses = 0
            for seat, card in played:
                if seat != me and len(game.legal_actions()) > 1 and game.policy_action("heuristic") != card:
                    misses += 1
                game.apply_action(int(card))
            weights.append(MISMATCH_WEIGHT**misses)
        return self.rng.choices(candidates, weights=weights, k=min(size, len(candidates)))

    @staticmethod
    def _backup(path: list[_Node], v: float) -> None:
        for node in path:
            node.visits += 1
            node.total += v

    def _select(self, game: Game, me: int, node: _Node, path: list[_Node], c: float, first: bool) -> None:
        # Walks the game to the end of its hand: the tree at the seat's own real choices, the
        # heuristic for everyone else and, once a new node is added, for the seat too.
        hand = game.hand_index
        expanded = not first and node.visits == 0
        while game.hand_index == hand and not game.is_over():
            if game.current_player != me or game.phase != PLAY or expanded:
                if expanded:
                    game.play_out("heuristic", hands=1)
                    return
                game.apply_action(game.policy_action("heuristic"))
                continue
            legal = game.legal_actions()
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


#: Worlds on which every root card is tried before the tree search proper.
_FLAT_WORLDS = 10
