#!/usr/bin/env python3
"""A Cancellation Hearts bot in plain Python: no SDK, no gRPC, only the standard library.

It speaks the stdin/stdout protocol (docs/PROTOCOL.md, "stdin/stdout bots"): it reads one JSON
line per message and answers each "decide" line, and each "rejected" line of the request it is
answering, with one JSON line. It passes its three highest cards, plays its lowest legal card
and takes -26 on a moon shot; after a rejection it answers again with its next choice. Enter it
with protocol = "stdio" in a tournament's config.
"""

import json
import sys

RANKS = "23456789TJQKA"


def rank(card):
    return RANKS.index(card[0])


def choose(request, tries):
    """The answer to a decide line; ``tries`` answers to it were rejected already."""
    kind = request["kind"]
    if kind == "pass":
        hand = sorted(request["view"]["hand"], key=rank, reverse=True)
        start = tries % max(1, len(hand) - 2)
        return hand[start : start + 3]
    if kind == "play":
        legal = sorted(request["legal"], key=rank)
        return legal[tries % len(legal)]
    return "self_minus_26"


request, tries = None, 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decide":
        request, tries = message, 0
    elif message["type"] == "rejected" and request is not None and message["id"] == request["id"]:
        print(f"rejected: {message['code']}: {message['reason']}", file=sys.stderr)
        if message["time_left_ms"] <= 0:
            continue
        tries += 1
    else:
        continue  # events: this bot keeps no state
    answer = {"id": request["id"], request["kind"]: choose(request, tries)}
    print(json.dumps(answer), flush=True)
