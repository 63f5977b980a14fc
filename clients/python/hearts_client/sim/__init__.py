"""``hearts_client.sim``: a fast local copy of the game for rollouts, search and training.

The backend is the native extension module ``hearts_sim`` (Rust, built from ``clients/sim/`` by
``make install``) when it imports, else the pure-Python fallback :mod:`hearts_client.sim._python`,
a layer over ``hearts_core``'s engine (slower; no Rust needed). Both have the same API and give
the same results for the same inputs and seeds. ``HEARTS_SIM_BACKEND=python`` or ``=native``
forces one; :data:`BACKEND` says which is in use. The API, the observation layout and the RNG
are documented in ``docs/SIMULATOR.md``.
"""

from __future__ import annotations

import os
from typing import Any

from hearts_client.sim._build import sample_worlds

_FORCED = os.environ.get("HEARTS_SIM_BACKEND", "").strip().lower()
if _FORCED not in ("", "python", "native"):
    raise ImportError(
        f"HEARTS_SIM_BACKEND={_FORCED!r} is not a backend: set it to 'python' or 'native', or unset it"
    )

_native: Any = None
if _FORCED != "python":
    try:
        import hearts_sim as _native
    except ImportError:
        if _FORCED == "native":
            raise ImportError(
                "HEARTS_SIM_BACKEND=native but the native module hearts_sim is not installed: "
                "run `make install` (it builds clients/sim with maturin), or unset HEARTS_SIM_BACKEND"
            ) from None
        _native = None

if _native is not None:
    BACKEND = "native"
    Game: Any = _native.Game
    VecGame: Any = _native.VecGame
    IllegalAction: Any = _native.IllegalAction
    NUM_ACTIONS: int = _native.NUM_ACTIONS
    MOON_SELF_MINUS_26: int = _native.MOON_SELF_MINUS_26
    MOON_OTHERS_PLUS_26: int = _native.MOON_OTHERS_PLUS_26
    PASS: int = _native.PASS
    PLAY: int = _native.PLAY
    MOON: int = _native.MOON
    OVER: int = _native.OVER
    obs_size: Any = _native.obs_size
    _replay: Any = _native.replay
else:
    from hearts_client.sim import _python

    BACKEND = "python"
    Game = _python.Game
    VecGame = _python.VecGame
    IllegalAction = _python.IllegalAction
    NUM_ACTIONS = _python.NUM_ACTIONS
    MOON_SELF_MINUS_26 = _python.MOON_SELF_MINUS_26
    MOON_OTHERS_PLUS_26 = _python.MOON_OTHERS_PLUS_26
    PASS = _python.PASS
    PLAY = _python.PLAY
    MOON = _python.MOON
    OVER = _python.OVER
    obs_size = _python.obs_size
    _replay = _python.replay

#: ``OBS_SIZE(players)``: the length of one observation (``320 + 60 * players``).
OBS_SIZE = obs_size
PHASE_NAMES = ("pass", "play", "moon", "over")


def replay_outcome(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` replayed through the simulator into its conformance outcome (as ``hearts replay``)."""
    return _replay(record)  # type: ignore[no-any-return]


__all__ = [
    "BACKEND",
    "MOON",
    "MOON_OTHERS_PLUS_26",
    "MOON_SELF_MINUS_26",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "OVER",
    "PASS",
    "PHASE_NAMES",
    "PLAY",
    "Game",
    "IllegalAction",
    "VecGame",
    "obs_size",
    "replay_outcome",
    "sample_worlds",
]
