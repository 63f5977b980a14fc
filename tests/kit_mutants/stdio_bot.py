"""A stdio bot (clients/stdio/lowest.py's play) with one defect chosen by name.

``python stdio_bot.py DEFECT``: ``good`` has none (it passes every check); the others are the
mutation set's stdio bots (tests/kit_mutants/__init__.py says which check catches each).
"""

import json
import os
import sys
import time

RANKS = "23456789TJQKA"
DEFECT = sys.argv[1]
flush = DEFECT != "buffered"


def rank(card):
    return RANKS.index(card[0])


def say(text):
    print(f"stdio_bot {DEFECT}: {text}", file=sys.stderr, flush=True)


def choose(request, tries):
    kind, view = request["kind"], request["view"]
    if kind == "pass":
        hand = sorted(view["hand"], key=rank, reverse=True)
        return hand[tries % (len(hand) - 2) : tries % (len(hand) - 2) + 3]
    if kind == "play":
        legal = sorted(request["legal"], key=rank)
        trick = view["current_trick"]["cards"]
        if DEFECT == "cancel-confused" and tries == 0 and len(trick) >= 2 and trick[0] == trick[1]:
            # It takes a pair that cancelled for no card of the suit led, and discards.
            off = [c for c in view["hand"] if c not in legal]
            if off:
                return max(off, key=rank)
        if DEFECT == "first-lead-filter" and not view["tricks"] and not view["current_trick"]["cards"]:
            # Its own idea of the first lead: never a heart or the QS.
            legal = [c for c in legal if c[1] != "H" and c != "QS"]
        return legal[tries % len(legal)]
    return "self_minus_26"


def check(request):
    """What a defect trips over in a request (it raises, as its bug would)."""
    view = request["view"]
    if DEFECT == "left-only" and view["pass_direction"] == "right":
        raise RuntimeError("passing right? cards always go left")
    if DEFECT == "six-only" and view["players"] != 6:
        raise IndexError(f"seat table of 6, not {view['players']}")
    if DEFECT == "slow-at-11" and view["players"] == 11:
        time.sleep(0.4)


if DEFECT == "no-start":
    say("fatal: cannot load the model weights")
    sys.exit(3)
if DEFECT == "slow-join":
    time.sleep(5)
if DEFECT == "chatty":
    print("stdio_bot 1.0 ready", flush=True)  # a banner, on the stdout that answers go to
request, tries = None, 0
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "game_completed" and DEFECT == "single-game":
        say("one game is enough")
        sys.exit(0)
    if kind == "hand_completed" and DEFECT == "last-trick-crash" and message["uncollected"]:
        raise RuntimeError(f"cards nobody took: {message['uncollected']}")
    if kind == "cards_received" and DEFECT == "both-copies-crash" and len(set(message["cards"])) < 3:
        raise RuntimeError(f"received {message['cards']}: a card twice?")
    if kind == "decide":
        request, tries = message, 0
        check(request)
    elif kind == "rejected" and request is not None and message["time_left_ms"] > 0:
        say(f"rejected: {message['code']}: {message['reason']}")
        if DEFECT == "no-retry":
            continue
        tries += 1
    else:
        continue
    if DEFECT == "silent":
        continue
    answer = {request["kind"]: choose(request, tries)}
    answer["id"] = request["id"] + 1000 if DEFECT == "stale-id" and tries == 0 else request["id"]
    if DEFECT == "stale-id" and tries > 0:
        del answer["id"]
    print(json.dumps(answer), flush=flush)
if DEFECT == "lingers":
    say("the game is over; staying around")
    while True:
        time.sleep(60)
if DEFECT == "buffered":
    os._exit(0)  # what it never flushed is lost, as when a bot is stopped
