"""Readable printing of games for ``hearts play`` and ``hearts replay``."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from hearts_core.cards import Card
from hearts_core.state import State


def _cards(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def print_game(
    state: State, names: Sequence[str], *, quiet: bool = False, console: Console | None = None
) -> None:
    """Prints every hand of a finished game: hands, tricks (cancellations and set-asides marked),
    points and totals per hand."""
    out = console or Console(highlight=False, soft_wrap=True)
    n = state.players
    totals = [0] * n
    for hand in state.results:
        for seat in range(n):
            totals[seat] += hand.scores[seat]
        if quiet:
            continue
        out.print(
            f"[bold]Hand {hand.index + 1}[/bold]  dealer {hand.dealer}, pass {hand.pass_direction.value}"
            + (f", kitty {_cards(hand.kitty)}" if hand.kitty else "")
        )
        for seat in range(n):
            dealt, passed = _cards(hand.deal[seat]), _cards(hand.passes[seat])
            out.print(f"  seat {seat:>2} {names[seat]:<10} {dealt}   passes {passed}")
        for number, trick in enumerate(hand.tricks, 1):
            counts: dict[Card, int] = {}
            for card in trick.cards:
                counts[card] = counts.get(card, 0) + 1
            shown = []
            for i, card in enumerate(trick.cards):
                seat = trick.seat_of(i, n)
                mark = "×" if counts[card] > 1 else ""
                shown.append(f"{seat}:{card}{mark}")
            result = f"won by {trick.winner}" if trick.winner is not None else "SET ASIDE"
            out.print(f"  trick {number:>2} led by {trick.leader:>2}: {'  '.join(shown)}  → {result}")
        if hand.uncollected:
            out.print(f"  uncollected: {_cards(hand.uncollected)}")
        if hand.moon is not None:
            out.print(f"  seat {hand.moon} shot the moon and chose {hand.moon_choice}")
        out.print("  points " + " ".join(f"{p:>4}" for p in hand.points))
        out.print("  scores " + " ".join(f"{p:>4}" for p in hand.scores))
        out.print("  totals " + " ".join(f"{p:>4}" for p in totals))
    table = Table(title=f"Final totals after {len(state.results)} hands (× marks a cancelled card)")
    table.add_column("seat", justify="right")
    table.add_column("bot")
    table.add_column("total", justify="right")
    table.add_column("", justify="left")
    for seat in sorted(range(n), key=lambda s: state.totals[s]):
        table.add_row(
            str(seat), names[seat], str(state.totals[seat]), "winner" if seat in state.winners else ""
        )
    out.print(table)
