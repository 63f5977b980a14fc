"""What ``hearts tournament`` and ``hearts league`` share about signed results: the line printed
with the standings (the key, the count and the head, and the exact check anyone can run with
them), and the ``--games``/``--head`` options that check them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hearts_tournaments.results.signing import SigningError, read_published_file

GamesOption = Annotated[
    int | None,
    typer.Option(
        "--games",
        min=0,
        help="The count of signed games published with the standings (with --head): games dropped "
        "from the end, an earlier published.json put back, fail the check.",
    ),
]
HeadOption = Annotated[
    str | None,
    typer.Option(
        "--head",
        metavar="HEX",
        help="The chain head published with the standings (after --games games); alone, a head kept "
        "earlier that must still be in the chain (a rollback past it fails).",
    ),
]


def signed_line(path: Path, check: str) -> str | None:
    """``signed: N games by KEY, chain head HEX ...`` from the ``published.json`` at ``path``, with
    the command ``check`` (``hearts tournament verify FOLDER``) anyone runs against them; None
    when there is no readable signed file."""
    try:
        published = read_published_file(path, kept=False)
    except (FileNotFoundError, SigningError):
        return None
    body = published.body
    key, games, head = body["public_key"], published.games, published.chain_head
    complete = ""
    if "scheduled" in body:
        state = "complete" if body.get("complete") is True else "incomplete"
        complete = f" ({state}: {body.get('played')} of {body.get('scheduled')} scheduled games)"
    return (
        f"signed: {games} games by {key}, chain head {head}{complete}; publish {path} with the "
        f"standings: anyone checks them with `{check} --public-key {key} --games {games} --head {head}`"
    )
