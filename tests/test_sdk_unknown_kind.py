"""A decision kind the SDK does not know is left to the referee, as the Go and Rust bots do.

Answering it with a moon choice (what the SDK's fallback did) is a wrong answer to a request
of another kind; sending nothing lets the referee decide by its default rule at the deadline.
"""

from __future__ import annotations

import asyncio

import pytest

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots import make_bot
from hearts_client.sdk import _BotPlayer, safe_answer

UNKNOWN = rpb.DecisionRequest(request_id=7, kind=42)  # type: ignore[arg-type]


def test_an_unknown_decision_kind_gets_no_answer() -> None:
    player = _BotPlayer(make_bot("heuristic", "1"))
    asked = asyncio.run(player.respond(rpb.PlayResponse(decision_request=UNKNOWN)))
    assert asked is None
    rejected = rpb.PlayResponse(rejection=rpb.Rejection(request_id=7, code="WRONG_ANSWER"))
    assert asyncio.run(player.respond(rejected)) is None


def test_the_safe_answer_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown decision kind 42"):
        safe_answer(UNKNOWN)
