"""The one way to drive a game: a generator that asks for decisions and yields what happened.

Every game loop of the project is :func:`drive` with a different source of answers and a
different sink for the events:

* the live referee (``hearts_server.table``) asks the seats over gRPC, with deadlines and faults,
  and turns each event into the messages each seat and spectator may see;
* in-process play (:mod:`hearts_core.local`, ``hearts play``, the benches) asks Python bots;
* replay (:mod:`hearts_core.replay`) and the per-seat redacted replay
  (``hearts_server.redacted``) take the answers from a game record.

:func:`drive` yields two kinds of step. A :class:`~hearts_core.state.Decision` says who must
decide what; the consumer answers it with ``generator.send(answer)``: a
:class:`~hearts_core.state.Deal` for ``DEAL``, an iterable of :class:`~hearts_core.state.Pass`
(one per seat in ``decision.seats``, applied in that order) for ``PASS``, a
:class:`~hearts_core.state.Play` or :class:`~hearts_core.state.Moon`. An event
(:data:`Event`) reports what the answer did; the consumer resumes with ``next(generator)``. An
illegal answer raises its :class:`~hearts_core.errors.HeartsError` out of ``send`` and ends the
game loop; the state is left as it was before that answer.

:func:`play_through` runs the loop for a consumer with synchronous answers.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass

from hearts_core.cards import Card
from hearts_core.public import TrickView
from hearts_core.state import Deal, Decision, DecisionKind, HandResult, Moon, Pass, Play, State


@dataclass(frozen=True, slots=True)
class HandStarted:
    """A hand was dealt (``state.hand_index`` is ``hand_index`` now)."""

    hand_index: int


@dataclass(frozen=True, slots=True)
class PassesExchanged:
    """Every seat passed; each seat now holds the cards it received."""

    hand_index: int


@dataclass(frozen=True, slots=True)
class CardPlayed:
    """A card was played to the trick ``trick_index`` of the hand."""

    hand_index: int
    trick_index: int
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickCompleted:
    """A trick is complete: who played what, and who won it (if anyone)."""

    hand_index: int
    trick_index: int
    trick: TrickView


@dataclass(frozen=True, slots=True)
class HandCompleted:
    """A hand was scored (after the moon choice, if any)."""

    result: HandResult
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game ended: a total reached the target score, or the last allowed hand was played."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]


#: What :func:`drive` reports after each answer.
Event = HandStarted | PassesExchanged | CardPlayed | TrickCompleted | HandCompleted | GameOver
#: What the consumer sends back for a Decision.
Answer = Deal | Iterable[Pass] | Play | Moon
Step = Decision | Event


def drive(state: State) -> Generator[Step, Answer | None, None]:
    """Drives ``state`` from where it stands to the end of the game; see the module docstring."""
    while (decision := state.to_decide()) is not None:
        answer = yield decision
        hands_done = len(state.results)
        kind = decision.kind
        if kind is DecisionKind.PLAY:
            if not isinstance(answer, Play):
                raise TypeError(f"a PLAY decision is answered with a Play, not {answer!r}")
            trick_index = state.trick_index
            state.apply(answer)
            yield CardPlayed(decision.hand_index, trick_index, answer.seat, answer.card)
            if len(state.tricks) > trick_index:
                yield TrickCompleted(decision.hand_index, trick_index, state.trick_views[trick_index])
        elif kind is DecisionKind.PASS:
            if not isinstance(answer, Iterable):
                raise TypeError(f"a PASS decision is answered with Pass actions, not {answer!r}")
            for action in answer:
                state.apply(action)
            yield PassesExchanged(decision.hand_index)
        elif kind is DecisionKind.DEAL:
            if not isinstance(answer, Deal):
                raise TypeError(f"a DEAL decision is answered with a Deal, not {answer!r}")
            state.apply(answer)
            yield HandStarted(state.hand_index)
        else:
            if not isinstance(answer, Moon):
                raise TypeError(f"a MOON decision is answered with a Moon, not {answer!r}")
            state.apply(answer)
        if len(state.results) > hands_done:
            yield HandCompleted(state.results[-1], tuple(state.totals))
    yield GameOver(tuple(state.totals), tuple(state.winners))


def play_through(
    state: State,
    answer: Callable[[Decision], Answer],
    on_event: Callable[[Event], None] | None = None,
    until: type[Event] = GameOver,
) -> State:
    """Runs :func:`drive` with synchronous answers until an event of type ``until``.

    Args:
        state: The game, from wherever it stands.
        answer: Gives the answer to each decision.
        on_event: Called with every event, in order (the ``until`` event included).
        until: Stop after the first event of this type (by default the end of the game;
            :class:`HandCompleted` plays one hand).

    Returns:
        ``state``, moved on.

    Raises:
        HeartsError: if an answer is illegal.
    """
    game = drive(state)
    try:
        step = next(game)
        while True:
            if isinstance(step, Decision):
                step = game.send(answer(step))
                continue
            if on_event is not None:
                on_event(step)
            if isinstance(step, until):
                return state
            step = next(game)
    except StopIteration:
        return state
    finally:
        game.close()
