"""The fair-play audit of a stored tournament: :mod:`hearts_tournaments.results.audit` on its
games, each deal a cluster."""

from __future__ import annotations

from pathlib import Path

from hearts_tournaments.results.audit import ALPHA, AuditReport, audit, read_games
from hearts_tournaments.tournament.folder import open_tournament


def audit_tournament(folder: Path, alpha: float = ALPHA) -> AuditReport:
    """The audit of the tournament stored in ``folder`` (its deals are the clusters).

    Raises:
        StoreError: ``folder`` holds no tournament.
        ConfigError: its stored configuration no longer reads.
    """
    tournament = open_tournament(folder, read_only=True)
    with tournament.store as store:
        deals = {game.key: game.deal for game in store.schedule().games}
        stored = [
            (o.key, f"deal {deals.get(o.key, o.key)}", o.seats, o.places, o.record_json)
            for o in store.outcomes()
        ]
    games, skipped = read_games(stored)
    return audit(games, alpha, str(folder), "bot", skipped)
