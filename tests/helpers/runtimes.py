"""The runtimes a test needs, installed on this machine as ``hearts runtime install`` installs them."""

from __future__ import annotations

import shutil

import pytest

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.runtimes import Installed
from hearts_tournaments.arena.runtimes.build import BuildError
from tests.helpers.toolchains import absent

#: A bot on the SDK that searches with the simulator: each legal card is played out to the end of
#: the hand, by the heuristic policy, in a few worlds sampled from what the seat knows.
SIM_BOT = """\
import sys

from hearts_client import Bot, main
from hearts_client.sim import BACKEND, Game, sample_worlds

print(f"search bot on the {BACKEND} simulator", file=sys.stderr, flush=True)
if BACKEND != "native":
    sys.exit("the native simulator, hearts_sim, is not there")


class Search(Bot):
    def choose_pass(self, view):
        return sorted(view.hand, key=lambda c: c.rank)[-3:]

    def choose_play(self, view):
        if len(view.legal) == 1:
            return view.legal[0]
        worlds = sample_worlds(view, 3, seed=len(view.tricks))

        def cost(card):
            total = 0
            for world in worlds:
                game = Game.from_view(view, world)
                game.apply_action(int(card))
                game.play_out("heuristic", hands=1)
                total += game.totals()[view.seat]
            return total

        return min(view.legal, key=cost)


main(Search())
"""


def require_runtime(name: str) -> Installed:
    """Runtime ``name``, installed (or brought up to date) now; the test skips when its install
    needs a toolchain this machine lacks (and fails under ``CI=true``)."""
    runtime = runtimes.get(name)
    missing = [tool for tool in runtime.needs if shutil.which(tool) is None]
    if missing:
        absent(f"runtime {name} needs {', '.join(missing)} to be installed")
    try:
        installed, _ = runtimes.install(name)
    except BuildError as exc:
        pytest.fail(f"runtime {name} cannot be installed here: {exc}")
    return installed
