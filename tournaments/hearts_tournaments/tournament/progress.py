"""Progress of a running tournament on stderr: a rich bar on a terminal, plain lines otherwise.

stdout is left to the results.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hearts_tournaments.arena.outcome import GameOutcome


class ProgressReporter:
    """Reports a tournament's progress on stderr (a :class:`hearts_tournaments.tournament.runner.Reporter`).

    Args:
        bar: Draw a live progress bar (games done / total, elapsed, ETA, faults so far);
            otherwise print one line per finished game.
        console: Where to write (default: stderr).
    """

    def __init__(self, bar: bool, console: Console | None = None) -> None:
        # soft_wrap: a note is one line even when stderr is a narrow terminal or a file.
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self.bar = bar
        self.total = 0
        self.done = 0
        self.faults = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def started(self, total: int, done: int, faults: int) -> None:
        """The run starts with ``done`` of ``total`` games already played."""
        self.total, self.done, self.faults = total, done, faults
        if done:
            self.console.print(f"resuming: {done} of {total} games already played")
        if not self.bar or done == total:
            return
        self._progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("faults {task.fields[faults]}"),
            console=self.console,
        )
        self._task = self._progress.add_task("games", total=total, completed=done, faults=faults)
        self._progress.start()

    def game_finished(self, outcome: GameOutcome) -> None:
        """Advances the bar, or prints a line."""
        self.done += 1
        self.faults += sum(outcome.faults)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, faults=self.faults)
            return
        self.console.print(
            f"[{self.done}/{self.total}] {outcome.key}: {outcome.hands} hands, "
            f"faults {sum(outcome.faults)} (so far {self.faults})"
        )

    def note(self, line: str) -> None:
        """Prints a line above the bar."""
        self.console.print(line)
