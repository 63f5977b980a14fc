"""A minimal bot on the code docs/PROTOCOL.md's Python recipe generates: it passes its first three
cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token."""

import os
import queue
from pathlib import Path

import grpc

from cancellation_hearts.v1 import game_pb2, referee_service_pb2, referee_service_pb2_grpc

pb = referee_service_pb2
token = Path(os.environ["HEARTS_TOKEN_FILE"]).read_text().strip()
outbox: "queue.Queue[referee_service_pb2.PlayRequest | None]" = queue.Queue()
outbox.put(pb.PlayRequest(join=pb.Join(token=token, bot_name="recipe-python", protocol_version=1)))
with grpc.insecure_channel(os.environ["HEARTS_SERVER"]) as channel:
    for response in referee_service_pb2_grpc.RefereeServiceStub(channel).Play(iter(outbox.get, None)):
        if not response.HasField("decision_request"):
            continue
        request = response.decision_request
        decision = pb.Decision(request_id=request.request_id)
        if request.kind == pb.DECISION_KIND_PASS:
            decision.pass_cards.cards.extend(request.view.hand[:3])
        elif request.kind == pb.DECISION_KIND_PLAY:
            decision.play_card.card = request.legal_cards[0]
        else:
            decision.choose_moon.choice = game_pb2.MOON_CHOICE_SELF_MINUS_26
        outbox.put(pb.PlayRequest(decision=decision))
    outbox.put(None)  # ends the request iterator
