"""Running a :class:`Bot` against a referee server over gRPC.

:func:`run` opens the seat's stream, joins with the token, turns every decision request into a
call of the bot with a :class:`View`, answers, and reconnects with backoff if the connection
breaks. It returns when the table's games are over.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import referee_service_pb2_grpc as rgrpc
from hearts_client._log import configure_stderr_logging, get_logger
from hearts_client.bot import Bot
from hearts_core.rules import DEFAULT_MAX_HANDS, MoonChoice
from hearts_core.state import DecisionKind
from hearts_core.view import HandSummary, TrickView
from hearts_protocol.convert import DECISION_KIND_FROM_PB, MOON_TO_PB, summary_from_pb, view_from_pb
from hearts_protocol.transport import own_channel

log = get_logger(__name__)

#: What a stream's read() returns once the referee has closed it with status OK.
_EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]

#: Status codes after which reconnecting cannot help.
FATAL_CODES = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNIMPLEMENTED,
        # Another stream with this seat's token took the seat over (the referee keeps the newest):
        # reconnecting would only take it back and forth.
        grpc.StatusCode.ABORTED,
    }
)


class BotRunError(Exception):
    """The referee refused the bot for good (bad token, finished table, ...)."""


class SeatPlayer(Protocol):
    """What answers a seat's stream for :func:`play_seat`.

    :func:`run_async` plays a :class:`Bot` this way; the stdin/stdout bridge
    (``hearts_client.stdio_bridge``) asks a bot's process instead.
    """

    @property
    def games_completed(self) -> int:
        """How many games of the table it has seen end."""

    async def respond(self, response: rpb.PlayResponse) -> rpb.Decision | None:
        """Handles one message of the referee; returns the answer to send, if any.

        On a stream joined with ``events_in_request`` (see :func:`play_seat`) a decision request
        may carry events (``DecisionRequest.events``): they come first.
        """


@dataclass
class _Session:
    """What the SDK remembers across messages (the bot itself may keep nothing)."""

    max_hands: int = DEFAULT_MAX_HANDS
    first_dealer: int = 0
    game_id: str = ""
    history: tuple[HandSummary, ...] = ()
    games_completed: int = 0
    rejections: int = 0
    #: The completed tricks of the last request's hand, converted, and which hand they are of.
    tricks: tuple[TrickView, ...] = ()
    tricks_of: tuple[str, int] = ("", -1)


#: Called with every message the referee sends, before the SDK handles it (for logging or tests).
MessageObserver = Callable[[rpb.PlayResponse], None]


class _BotPlayer:
    """Plays a seat with a :class:`Bot`: converts each request to a View and asks the bot."""

    def __init__(self, bot: Bot, on_message: MessageObserver | None = None) -> None:
        self.bot = bot
        self.session = _Session()
        self.last_request: rpb.DecisionRequest | None = None
        self.on_message = on_message

    @property
    def games_completed(self) -> int:
        return self.session.games_completed

    async def respond(self, response: rpb.PlayResponse) -> rpb.Decision | None:
        session = self.session
        if self.on_message is not None:
            self.on_message(response)
        kind = response.WhichOneof("message")
        if kind == "decision_request":
            request = response.decision_request
            for event in request.events:  # what happened since the last message, first
                self._event(event)
            if request.kind not in DECISION_KIND_FROM_PB:
                # A kind of a later protocol: no answer of this one fits, so the referee decides.
                log.warning("unknown_decision_kind", request_id=request.request_id, kind=request.kind)
                self.last_request = None
                return None
            self.last_request = request
            # Inline: this process serves one seat, and a thread hop costs more than it saves.
            return _answer(self.bot, request, session)
        if kind == "rejection":
            rejection = response.rejection
            session.rejections += 1
            log.warning("answer_rejected", code=rejection.code, reason=rejection.reason)
            if self.last_request is not None and rejection.request_id == self.last_request.request_id:
                # The bot's answer was refused: the SDK answers for it, and says so.
                return safe_answer(self.last_request, bot_error=True)
        elif kind == "snapshot":
            session.history = tuple(summary_from_pb(h) for h in response.snapshot.hands)
            log.info("resumed", hand=response.snapshot.view.hand_index)
        elif kind == "event":
            self._event(response.event)
        elif kind == "events":
            for event in response.events.events:
                self._event(event)
        return None

    def _event(self, event: rpb.Event) -> None:
        session = self.session
        which = event.WhichOneof("event")
        if which in _IGNORED_EVENTS:
            return
        if which == "game_started":
            started = event.game_started
            if started.bot_seed and started.game_id != session.game_id:
                # A process playing several games plays each as a fresh one seeded so would.
                self.bot.reseed(started.bot_seed)
        _on_event(event, session, which)


def _answer(bot: Bot, request: rpb.DecisionRequest, session: _Session) -> rpb.Decision:
    """Asks the bot; a bot that raises gets a safe answer instead, marked ``bot_error``.

    The referee records and counts a marked answer (``SeatResult.bot_errors``), so a bot that
    fails on every decision shows in the results instead of silently playing the first card.
    """
    hand = (session.game_id, request.view.hand_index)
    view = view_from_pb(
        request.view,
        request.legal_cards,
        max_hands=session.max_hands,
        first_dealer=session.first_dealer,
        history=session.history,
        known_tricks=session.tricks if session.tricks_of == hand else (),
    )
    session.tricks, session.tricks_of = view.tricks, hand
    bot.time_left = request.time_left_ms / 1000
    decision = rpb.Decision(request_id=request.request_id)
    kind = DECISION_KIND_FROM_PB[request.kind]
    try:
        if kind is DecisionKind.PASS:
            decision.pass_cards.cards.extend(str(c) for c in bot.choose_pass(view))
        elif kind is DecisionKind.PLAY:
            decision.play_card.card = str(bot.choose_play(view))
        else:
            decision.choose_moon.choice = MOON_TO_PB[MoonChoice(bot.choose_moon(view))]
    except Exception:
        log.exception("bot_decision_failed", request_id=request.request_id)
        return safe_answer(request, bot_error=True)
    return decision


def safe_answer(request: rpb.DecisionRequest, *, bot_error: bool = False) -> rpb.Decision:
    """An answer that is always legal: the first legal card, the first three cards, or -26.

    ``bot_error`` marks it as not the bot's own choice (``Decision.bot_error``).

    Raises:
        ValueError: for a decision kind this protocol version does not know (no answer fits:
            leave it to the referee).
    """
    decision = rpb.Decision(request_id=request.request_id, bot_error=bot_error)
    kind = DECISION_KIND_FROM_PB.get(request.kind)
    if kind is DecisionKind.PASS:
        decision.pass_cards.cards.extend(list(request.view.hand)[:3])
    elif kind is DecisionKind.PLAY:
        decision.play_card.card = request.legal_cards[0]
    elif kind is DecisionKind.MOON:
        decision.choose_moon.choice = pb.MOON_CHOICE_SELF_MINUS_26
    else:
        raise ValueError(f"unknown decision kind {request.kind}")
    return decision


@dataclass
class _Attempt:
    """One connection attempt: whether it got at least one message from the referee."""

    connected: bool = False


async def _session(
    channel: grpc.aio.Channel,
    player: SeatPlayer,
    token: str,
    name: str,
    attempt: _Attempt,
    events_in_request: bool = False,
) -> None:
    """One stream: join, then let ``player`` answer until the referee closes it.

    Raises:
        grpc.aio.AioRpcError: when the stream ends with any status but OK.
    """
    stub = rgrpc.RefereeServiceStub(channel)
    # The stream's own read/write API: no request generator and queue hop per answer. read()
    # raises AioRpcError when the stream ends with any status but OK.
    call: Any = stub.Play()  # type: ignore[call-arg]  # the stubs know only the iterator form
    try:
        join = rpb.Join(token=token, bot_name=name, protocol_version=1, events_in_request=events_in_request)
        await call.write(rpb.PlayRequest(join=join))
        while True:
            response = await call.read()
            if response is _EOF:
                break
            assert isinstance(response, rpb.PlayResponse)
            attempt.connected = True
            answer = await player.respond(response)
            if answer is not None:
                with contextlib.suppress(asyncio.InvalidStateError):  # the stream ended meanwhile
                    await call.write(rpb.PlayRequest(decision=answer))
    finally:
        call.cancel()


#: Events the SDK keeps nothing of (every request's View has what they say).
_IGNORED_EVENTS = frozenset({"card_played", "trick_completed", "hand_started", "cards_received"})


def _on_event(event: rpb.Event, session: _Session, which: str | None = None) -> None:
    if which is None:
        which = event.WhichOneof("event")
    if which == "game_started":
        started = event.game_started
        if started.game_id != session.game_id:
            session.history = ()
        session.game_id = started.game_id
        session.max_hands = started.max_hands or DEFAULT_MAX_HANDS
        session.first_dealer = started.first_dealer
        log.info("game_started", game_id=started.game_id, seat=started.your_seat, players=started.players)
    elif which == "hand_completed":
        session.history = (*session.history, summary_from_pb(event.hand_completed))
    elif which == "game_completed":
        session.games_completed += 1
        log.info(
            "game_completed", game_id=event.game_completed.game_id, totals=list(event.game_completed.totals)
        )
    elif which == "seat_faulted":
        fault = event.seat_faulted
        log.info("seat_faulted", seat=fault.seat, kind=pb.FaultKind.Name(fault.kind), detail=fault.detail)


async def run_async(
    bot: Bot,
    address: str,
    token: str,
    *,
    name: str | None = None,
    root_certificates: bytes | None = None,
    max_backoff: float = 2.0,
    give_up_after: float = 30.0,
    on_message: MessageObserver | None = None,
) -> int:
    """Plays the seat of ``token`` at ``address`` with ``bot`` until the table is done.

    Reconnects with exponential backoff (0.1 s doubling to ``max_backoff``, with jitter) when the
    stream breaks, and gives up after ``give_up_after`` seconds without a working stream.
    ``on_message`` sees every message the referee sends, as it arrives.

    Returns:
        The number of games completed.

    Raises:
        BotRunError: if the referee refuses the bot for good, or cannot be reached.
    """
    return await play_seat(
        _BotPlayer(bot, on_message),
        address,
        token,
        name=name or bot.name,
        root_certificates=root_certificates,
        max_backoff=max_backoff,
        give_up_after=give_up_after,
        events_in_request=True,
    )


async def play_seat(
    player: SeatPlayer,
    address: str,
    token: str,
    *,
    name: str,
    root_certificates: bytes | None = None,
    max_backoff: float = 2.0,
    give_up_after: float = 30.0,
    events_in_request: bool = False,
) -> int:
    """:func:`run_async` for any :class:`SeatPlayer`: the stream, the join and the reconnections.

    With ``events_in_request`` the join asks the referee to deliver the events it holds for the
    seat inside the next decision request (``DecisionRequest.events``, one message per decision
    instead of two): only for a ``player`` that handles them before the request.

    Returns:
        The number of games completed.

    Raises:
        BotRunError: if the referee refuses the bot for good, or cannot be reached.
    """
    delay = 0.1
    failing_since: float | None = None
    loop = asyncio.get_running_loop()
    log.info("bot_starting", bot=name, server=address)
    while True:
        # A connection of its own: several seats played from one process must not share one
        # (the referee allows few calls per connection).
        channel = own_channel(
            address,
            grpc.ssl_channel_credentials(root_certificates) if root_certificates is not None else None,
        )
        attempt = _Attempt()
        try:
            async with channel:
                await _session(channel, player, token, name, attempt, events_in_request)
            log.info("table_done", games=player.games_completed)
            return player.games_completed
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            if code in FATAL_CODES:
                raise BotRunError(f"the referee refused the bot: {code.name}: {exc.details()}") from None
            now = loop.time()
            if attempt.connected:  # the stream worked for a while: start the backoff afresh
                failing_since, delay = None, 0.1
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since > give_up_after:
                raise BotRunError(
                    f"no working connection to {address} for {give_up_after:.0f} s: {code.name}"
                ) from None
            log.warning("reconnecting", code=code.name, details=exc.details(), delay=round(delay, 2))
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, max_backoff)


def run(
    bot: Bot,
    address: str,
    token: str,
    *,
    name: str | None = None,
    tls_ca: Path | None = None,
) -> int:
    """Synchronous :func:`run_async`: plays until the table is done; returns games completed."""
    roots = tls_ca.read_bytes() if tls_ca is not None else None
    return asyncio.run(run_async(bot, address, token, name=name, root_certificates=roots))


class TokenError(Exception):
    """No usable seat token was given."""


def read_token(token: str | None, token_file: str | Path | None) -> str:
    """The seat token: from ``token_file`` when given (its text, whitespace stripped), else ``token``.

    A referee-run bot gets its token in a file that only it can read (``--token-file`` or
    ``HEARTS_TOKEN_FILE``), never on its command line, where other processes could read it.

    Raises:
        TokenError: if neither gives a token, or the file cannot be read.
    """
    if token_file:
        try:
            text = Path(token_file).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"cannot read the token file {token_file}: {exc}") from None
        if not text:
            raise TokenError(f"the token file {token_file} is empty")
        return text
    if token:
        return token
    raise TokenError(
        "a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T (HEARTS_TOKEN)"
    )


def main(bot: Bot, argv: list[str] | None = None) -> None:
    """Command-line entry point for a bot script: ``main(MyBot())`` under ``__main__``.

    Takes the same flags and environment variables as every bot of the project:
    ``--server TARGET`` (HEARTS_SERVER, default 127.0.0.1:50051; ``HOST:PORT`` or ``unix:PATH``),
    ``--token-file FILE`` (HEARTS_TOKEN_FILE) or ``--token T`` (HEARTS_TOKEN), ``--name``
    (HEARTS_BOT_NAME) and ``--tls-ca FILE``. Exits 1 with one clear line when the referee
    refuses the bot.
    """
    import argparse
    import os
    import sys

    parser = argparse.ArgumentParser(description=f"Run the {bot.name!r} bot in one seat of a referee.")
    parser.add_argument("--server", default=os.environ.get("HEARTS_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("HEARTS_TOKEN"))
    parser.add_argument("--token-file", default=os.environ.get("HEARTS_TOKEN_FILE"))
    parser.add_argument("--name", default=os.environ.get("HEARTS_BOT_NAME"))
    parser.add_argument("--tls-ca", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        token = read_token(args.token, args.token_file)
    except TokenError as exc:
        parser.error(str(exc))
    configure_stderr_logging()
    try:
        run(bot, args.server, token, name=args.name, tls_ca=args.tls_ca)
    except BotRunError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        sys.exit(1)
