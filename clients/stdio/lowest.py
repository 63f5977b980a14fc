#!/usr/bin/env python3
"""A Cancellation Hearts bot in plain Python: no SDK, no gRPC, only the standard library.

It speaks the stdin/stdout protocol (docs/PROTOCOL.md, "stdin/stdout bots"): it reads one JSON
line per message and answers each "decide" line with one JSON line. It passes its three highest
cards, plays its lowest legal card and takes -26 on a moon shot. Enter it with
protocol = "stdio" in a tournament's config.
"""

import json
import sys

RANKS = "23456789TJQKA"


def rank(card):
    return RANKS.index(card[0])


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "rejected":
        print(f"rejected: {message['code']}: {message['reason']}", file=sys.stderr)
    if message["type"] != "decide":
        continue  # events: this bot keeps no state
    kind = message["kind"]
    if kind == "pass":
        answer = sorted(message["view"]["hand"], key=rank)[-3:]
    elif kind == "play":
        answer = min(message["legal"], key=rank)
    else:
        answer = "self_minus_26"
    print(json.dumps({"id": message["id"], kind: answer}), flush=True)
