"""A bot speaking the gRPC protocol by hand (no SDK), with one defect chosen by name.

``python grpc_bot.py DEFECT --server unix:PATH --token-file FILE``: ``good`` has none (it
passes every check); the others are the mutation set's gRPC bots (tests/kit_mutants/__init__.py
says which check catches each). Its play: three highest cards passed, lowest legal card played,
-26 on a moon shot; it answers again after a rejection and reconnects after a lost stream.
"""

import argparse
import queue
import subprocess
import sys
import time
from pathlib import Path

import grpc

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import referee_service_pb2_grpc as rgrpc

RANKS = "23456789TJQKA"
DEFECT = sys.argv[1]
AGAIN = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED)


def rank(card):
    return RANKS.index(card[0])


def say(text):
    print(f"grpc_bot {DEFECT}: {text}", file=sys.stderr, flush=True)


class Seat:
    """One stream's worth of play: answers requests, counts what the defects key on."""

    def __init__(self):
        self.answers = 0
        self.games_done = 0
        self.players = 0

    def answer(self, request, tries=0):
        decision = rpb.Decision(request_id=request.request_id)
        if request.kind == rpb.DECISION_KIND_PASS:
            decision.pass_cards.cards.extend(sorted(request.view.hand, key=rank)[-3:])
        elif request.kind == rpb.DECISION_KIND_PLAY:
            legal = sorted(request.legal_cards, key=rank)
            decision.play_card.card = legal[tries % len(legal)]
        else:
            decision.choose_moon.choice = pb.MOON_CHOICE_SELF_MINUS_26
        return decision

    def play(self, stub, token):
        """Plays one stream to its end; returns its status code."""
        out = queue.Queue()
        out.put(rpb.PlayRequest(join=rpb.Join(token=token, bot_name="mutant", protocol_version=1)))
        requests = iter(out.get, None)
        open_request, tries = None, 0
        try:
            for response in stub.Play(requests):
                which = response.WhichOneof("message")
                events = []
                if which == "event":
                    events = [response.event]
                elif which == "events":
                    events = list(response.events.events)
                for event in events:
                    kind = event.WhichOneof("event")
                    if kind == "game_started":
                        self.players = event.game_started.players
                    elif kind == "game_completed":
                        self.games_done += 1
                        if DEFECT == "single-game":
                            say("one game is enough")
                            sys.exit(0)
                if which == "decision_request":
                    request = response.decision_request
                    open_request, tries = request, 0
                    self.before(request)
                    decision = self.answer(request)
                    if DEFECT == "stale-id":
                        decision.request_id = request.request_id - 1
                    out.put(rpb.PlayRequest(decision=decision))
                    self.answers += 1
                elif which == "rejection":
                    say(f"rejected: {response.rejection.code}: {response.rejection.reason}")
                    if DEFECT == "no-retry" or open_request is None:
                        continue
                    if response.rejection.request_id not in (
                        open_request.request_id,
                        open_request.request_id - 1,
                    ):
                        continue
                    tries += 1
                    out.put(rpb.PlayRequest(decision=self.answer(open_request, tries)))
            return grpc.StatusCode.OK
        except grpc.RpcError as exc:
            return exc.code()
        finally:
            out.put(None)

    def before(self, request):
        """What a defect does before it answers."""
        if DEFECT == "crash-mid-game" and self.answers >= 3:
            say("fatal: out of ideas")
            sys.exit(1)
        if DEFECT == "memory-hog" and self.answers == 1:
            say("loading a large table")
            hog = bytearray(400 * 1024 * 1024)
            for i in range(0, len(hog), 4096):
                hog[i] = 1
            time.sleep(5)
        if DEFECT == "cpu-burner" and self.answers == 1:
            end = time.process_time() + 60
            while time.process_time() < end:
                pass
        first_card = request.kind == rpb.DECISION_KIND_PLAY and not request.view.tricks
        if DEFECT == "over-limit" and self.players == 9 and first_card and request.view.hand_index == 0:
            time.sleep(1.5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    if DEFECT != "flags":
        parser.add_argument("--token-file", required=True)
    args = parser.parse_args(sys.argv[2:])
    token = Path(args.token_file).read_text().strip()
    if DEFECT == "leaves-child":
        # A helper of its own, started and never stopped (its own session, its own output).
        subprocess.Popen(
            ["sleep", "600"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    seat = Seat()
    with grpc.insecure_channel(args.server) as channel:
        stub = rgrpc.RefereeServiceStub(channel)
        while True:
            code = seat.play(stub, token)
            if code == grpc.StatusCode.OK:
                break
            if code in AGAIN and DEFECT != "no-reconnect":
                say(f"stream ended with {code.name}: reconnecting")
                time.sleep(0.1)
                continue
            say(f"stream ended with {code.name}: giving up")
            sys.exit(1)
    if DEFECT == "exit-nonzero":
        sys.exit(3)
    sys.exit(0)


main()
