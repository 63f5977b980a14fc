"""A colluding entrant: the heuristic bot, but it finds its partner (and a rival) by name.

``colluding_bot.py [--partner NAME ...] [--rival NAME] [--strategy spare|rival|none]`` plus the
runner's ``--server TARGET --token-file FILE``. At every game it reads the names the referee
announces in ``GameStarted.seats`` and prints one line ``LEARNED {json}`` on stdout (its log):
the names it saw, and which seats it took for its partner and its rival. Then it plays the
heuristic bot's cards except:

* ``spare``: when it cannot follow suit and its partner is winning the trick, it throws no point
  card when it may play another (a high card of another suit instead);
* ``rival``: ``spare``, and onto a trick the rival is winning it throws the most points it can;
* ``none``: never (it only reports what it learned).

The fair-play tests check what it learned against the table's hiding of names, and that the
audit flags it and its partner.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Sequence

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.sdk import read_token, run_async
from hearts_core.cards import Card
from hearts_core.state import winning_index
from hearts_core.view import View


class ColludingBot(HeuristicBot):
    """The heuristic bot with one rule of collusion (module docstring)."""

    name = "colluding"

    def __init__(self, partners: Sequence[str], rival: str | None, strategy: str) -> None:
        super().__init__()
        self.partners = set(partners)
        self.rival = rival
        self.strategy = strategy
        self.partner_seats: set[int] = set()
        self.rival_seats: set[int] = set()

    def observe(self, response: rpb.PlayResponse) -> None:
        """Reads every GameStarted the referee sends (alone, in a batch, or inside a request)."""
        kind = response.WhichOneof("message")
        if kind == "event":
            events = [response.event]
        elif kind == "events":
            events = list(response.events.events)
        elif kind == "decision_request":
            events = list(response.decision_request.events)
        else:
            return
        for event in events:
            if event.WhichOneof("event") != "game_started":
                continue
            started = event.game_started
            names = [seat.bot_name for seat in sorted(started.seats, key=lambda s: s.seat)]
            mine = started.your_seat
            self.partner_seats = {s for s, n in enumerate(names) if n in self.partners and s != mine}
            self.rival_seats = {s for s, n in enumerate(names) if n == self.rival}
            learned = {
                "game_id": started.game_id,
                "seat": mine,
                "names": names,
                "partner_seats": sorted(self.partner_seats),
                "rival_seats": sorted(self.rival_seats),
            }
            print("LEARNED " + json.dumps(learned), flush=True)

    def choose_play(self, view: View) -> Card:
        base = super().choose_play(view)
        if self.strategy == "none" or view.current is None or not view.current.cards:
            return base
        trick = list(view.current.cards)
        legal = list(view.legal)
        if any(card.suit == trick[0].suit for card in legal):
            return base
        winning = winning_index(trick)
        if winning is None:
            return base
        winner = view.current.seat_of(winning, view.players)
        if self.strategy == "rival" and winner in self.rival_seats:
            return max(legal, key=lambda c: (c.points, c.rank))
        if winner in self.partner_seats and base.points:
            spare = [c for c in legal if not c.points]
            if spare:
                return max(spare, key=lambda c: c.rank)
        return base


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A colluding bot for the fair-play tests.")
    parser.add_argument("--partner", action="append", default=[])
    parser.add_argument("--rival")
    parser.add_argument("--strategy", choices=("spare", "rival", "none"), default="spare")
    parser.add_argument("--server", default=os.environ.get("HEARTS_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token-file", default=os.environ.get("HEARTS_TOKEN_FILE"))
    args = parser.parse_args(argv)
    bot = ColludingBot(args.partner, args.rival, args.strategy)
    token = read_token(None, args.token_file)
    name = os.environ.get("HEARTS_BOT_NAME")
    asyncio.run(run_async(bot, args.server, token, name=name, on_message=bot.observe))


if __name__ == "__main__":
    main()
