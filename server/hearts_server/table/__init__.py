"""The live referee of a table, in parts by job.

- :mod:`.table`: the game loop (the one driver, :func:`hearts_core.driver.drive`) over the seats;
- :mod:`.decisions`: deadlines, faults and the default rule; checking answers;
- :mod:`.streams`: a seat's live stream and its flood allowance;
- :mod:`.broadcast`: each seat's feed and the spectators' public stream;
- :mod:`.gamelog`: the decisions and faults of a game, and the finished game's record;
- :mod:`.settings`: how a table plays, and the defaults;
- :mod:`.clock`: time as a dependency (a manual clock in tests);
- :mod:`.script`: scripted games, for the bot test kit only (chosen deals, a refused answer).
"""

from hearts_server.table.clock import Clock, LoopClock, ManualClock
from hearts_server.table.decisions import RECONNECT_GRACE_S, FaultKind, Rejected, Seat
from hearts_server.table.gamelog import FinishedGame, SeatStats
from hearts_server.table.settings import NOBODY_JOINED, TableSettings, TableStatus
from hearts_server.table.streams import FLOOD_BURST, FLOOD_RATE, AlreadyConnected, Connection
from hearts_server.table.table import Table

__all__ = [
    "FLOOD_BURST",
    "FLOOD_RATE",
    "NOBODY_JOINED",
    "RECONNECT_GRACE_S",
    "AlreadyConnected",
    "Clock",
    "Connection",
    "FaultKind",
    "FinishedGame",
    "LoopClock",
    "ManualClock",
    "Rejected",
    "Seat",
    "SeatStats",
    "Table",
    "TableSettings",
    "TableStatus",
]
