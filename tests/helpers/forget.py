"""Making a tournament folder look as if some of its games were never played, as a test needs.

Deleting rows alone would leave the signature chain with a hole (which ``verify`` rightly
reports as dropped games): the organiser's own key signs the games that are left again, in
order, and the cached standings go, as in a folder that never stored those games.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from hearts_tournaments.results import signing
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME
from hearts_tournaments.tournament.store import Store


def forget_games(output: Path, keys: Iterable[str]) -> None:
    """Removes the games ``keys`` from the tournament in ``output`` (rows, signatures, cache)."""
    with sqlite3.connect(output / "tournament.sqlite") as db:
        for key in keys:
            db.execute("DELETE FROM games WHERE key = ?", (key,))
        db.execute("DELETE FROM signatures")
    with Store.open(output) as store:
        store.sign_with(signing.load_signing_key())
        assert store.signer is not None
        with store._db:
            for key, summary, record in store._db.execute(
                "SELECT key, summary, record FROM games ORDER BY seq"
            ).fetchall():
                store.signer.sign_next(store._db, key, summary, record)
        store.publish(output)
    (output / SNAPSHOT_NAME).unlink(missing_ok=True)
