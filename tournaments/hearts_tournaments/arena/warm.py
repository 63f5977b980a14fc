"""Warm bots: bot processes that play game after game (``reuse = "between_deals"``).

Each warm process gets a session token (``AdminService.OpenSession``) in place of a seat token;
the runner binds a seat of each later table to its session (``BindSeat``) and the process's one
Play stream receives game after game. The fairness rules, the same for every entrant:

- a process never plays two games of the same deal (with duplicate deals it would otherwise
  remember the hands it saw in another rotation): a seat is given an idle process of its bot
  that has not seen the game's deal, else a fresh one;
- a process is replaced after ``restart_after`` games, and as soon as it exits or crashes;
- a late answer from a previous game never acts on the next: request ids are drawn
  server-wide, and an answer arriving between games is dropped;
- the CPU budget of ``[limits]`` is per game (the watchdog rebases it at each game);
- every process is stopped when the run ends, and none outlives the runner (bwrap's
  ``--die-with-parent``; the in-process referee's streams end with it).

A bot's seed is the one of the seat and game it was started for; a deterministic bot gives the
same results whatever the policy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_server.logs import get_logger
from hearts_tournaments.arena.entrants import BotProcess

log = get_logger(__name__)

#: Starts a bot process with a session token: (token, serial) -> process.
Starter = Callable[[str, int], Awaitable[BotProcess]]


@dataclass(slots=True)
class WarmBot:
    """One warm bot process and what it has played.

    Attributes:
        serial: Its number in this run (names its log file).
        bot: The bot's name.
        session_id: Its session at the referee.
        process: The process.
        deals: The deals it has played (never one twice).
        games: Games it has played.
        busy: Whether it is seated at a table now.
    """

    serial: int
    bot: str
    session_id: str
    process: BotProcess
    deals: set[int] = field(default_factory=set)
    games: int = 0
    busy: bool = True

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.returncode is None


class WarmPool:
    """The runner's warm bot processes, per bot.

    Args:
        admin: The referee's admin API.
        metadata: The admin call metadata.
        restart_after: Games after which a process is replaced.
        retire: Called with a process that leaves the pool (the runner stops it in the background).
    """

    def __init__(
        self,
        admin: agrpc.AdminServiceAsyncStub,
        metadata: tuple[tuple[str, str], ...],
        restart_after: int,
        retire: Callable[[WarmBot], None],
    ) -> None:
        self.admin = admin
        self.metadata = metadata
        self.restart_after = restart_after
        self._retire = retire
        self.idle: dict[str, list[WarmBot]] = {}
        self.members: dict[int, WarmBot] = {}
        self._serial = 0

    async def take(self, bot: str, deal: int, start: Starter) -> WarmBot:
        """An idle process of ``bot`` that has not played ``deal``, else a fresh one from ``start``."""
        for warm in self.idle.get(bot, []):
            if deal not in warm.deals and warm.alive:
                self.idle[bot].remove(warm)
                warm.busy = True
                warm.process.new_game()
                return warm
        self._serial += 1
        serial = self._serial
        opened = await self.admin.OpenSession(apb.OpenSessionRequest(bot_name=bot), metadata=self.metadata)
        try:
            process = await start(opened.token, serial)
        except BaseException:
            await self._close_session(opened.session_id)
            raise
        warm = WarmBot(serial, bot, opened.session_id, process)
        self.members[serial] = warm
        log.info("warm_bot_started", bot=bot, serial=serial, pid=process.pid)
        return warm

    async def bind(self, warm: WarmBot, table_id: str, seat: int, bot_seed: str) -> None:
        """Binds a table's seat to the process's session, with the seat's seed for its bot."""
        warm.process.seat = seat
        request = apb.BindSeatRequest(
            session_id=warm.session_id, table_id=table_id, seat=seat, bot_seed=bot_seed
        )
        await self.admin.BindSeat(request, metadata=self.metadata)

    async def give_back(self, warm: WarmBot, deal: int, played: bool, crashed: bool) -> None:
        """Returns a process after its game: idle again, or retired (crashed, exited, worn out)."""
        warm.busy = False
        if played:
            warm.deals.add(deal)
            warm.games += 1
        if crashed or not warm.alive or warm.games >= self.restart_after:
            await self.drop(warm)
            return
        self.idle.setdefault(warm.bot, []).append(warm)

    async def drop(self, warm: WarmBot) -> None:
        """Takes a process out of the pool: its session is closed and it is retired."""
        self.members.pop(warm.serial, None)
        with contextlib.suppress(ValueError):
            self.idle.get(warm.bot, []).remove(warm)
        await self._close_session(warm.session_id)
        self._retire(warm)

    async def drop_bot(self, bot: str) -> None:
        """Retires every idle process of a bot (quarantined)."""
        for warm in list(self.idle.get(bot, [])):
            await self.drop(warm)

    async def close(self) -> None:
        """Retires every process (the run is over): each session ends, each bot exits."""
        for warm in list(self.members.values()):
            await self.drop(warm)

    def kill(self) -> None:
        """Kills every process at once (the run is stopping)."""
        for warm in self.members.values():
            warm.process.kill()
        self.members.clear()
        self.idle.clear()

    async def _close_session(self, session_id: str) -> None:
        try:
            request = apb.CloseSessionRequest(session_id=session_id)
            await self.admin.CloseSession(request, metadata=self.metadata)
        except grpc.aio.AioRpcError as exc:  # the referee is going away: its streams end anyway
            log.warning("close_session_failed", session_id=session_id, code=exc.code().name)
