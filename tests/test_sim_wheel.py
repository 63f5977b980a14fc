"""``maturin build`` makes a wheel of the simulator that installs into an empty venv, alone.

The wheel (abi3, CPython >= 3.11) must need nothing from the index: it is installed with
``--no-index``, so a declared dependency would fail the install, and the venv must hold only it
afterwards. The module then plays a game with no numpy installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_sim_native import build_id

pytestmark = pytest.mark.timeout(900)
VENV_TOOLS = {"pip", "setuptools", "wheel"}


def _tool(name: str, *extra: Path) -> str | None:
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), *map(str, extra)]))
    return found or shutil.which(name)


def test_the_wheel_installs_into_an_empty_venv_and_runs_without_dependencies(tmp_path: Path) -> None:
    maturin = _tool("maturin")
    cargo = _tool("cargo", Path.home() / ".cargo" / "bin")
    if maturin is None or cargo is None:
        pytest.skip(f"building the simulator's wheel needs maturin and cargo (found: {maturin}, {cargo})")
    env = {**os.environ, "PATH": f"{Path(cargo).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            maturin,
            "build",
            "--release",
            "--locked",
            "-q",
            "-m",
            str(ROOT / "clients" / "sim" / "python" / "Cargo.toml"),
            "-i",
            sys.executable,
            "-o",
            str(wheels),
        ],
        check=True,
        env=env,
        timeout=840,
    )
    (wheel,) = wheels.glob("cancellation_hearts_sim-*.whl")
    assert "abi3" in wheel.name
    home = tmp_path / "venv"
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "-q", "--no-index", str(wheel)]
    subprocess.run(install, check=True, timeout=300)
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    )
    assert {p["name"].lower() for p in json.loads(listed.stdout)} - VENV_TOOLS == {"cancellation-hearts-sim"}
    probe = (
        "import json, hearts_sim\n"
        "g = hearts_sim.Game(8, 'wheel', max_hands=3)\n"
        "g.play_out('heuristic')\n"
        "obs = type(g.observation(0)).__name__\n"
        "print(json.dumps([hearts_sim.BUILD_ID, g.is_over(), len(g.hand_scores_history()), obs]))\n"
    )
    run = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(run.stdout) == [build_id(), True, 3, "list"]
