"""``python -m hearts_client.sim replay`` prints exactly what ``hearts replay`` prints.

Both commands run as real processes on every conformance vector and on games recorded by
``hearts play --record`` (a seeded record, so the seed check runs too), for each backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import hearts
from tests.helpers.sim_backends import BACKENDS, backend

VECTORS = sorted((Path(__file__).parent / "conformance" / "vectors").glob("*.json"))


def sim_cli(*args: str, backend_name: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HEARTS_SIM_BACKEND": backend_name}
    return subprocess.run(
        [sys.executable, "-m", "hearts_client.sim", *args],
        capture_output=True, text=True, timeout=240, check=False, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("name", BACKENDS)
def test_replay_prints_the_lines_hearts_replay_prints(name: str, tmp_path: Path) -> None:
    backend(name)  # skips when the native module is not built
    records = []
    for players, bots in ((8, "heuristic,random"), (11, "heuristic"), (6, "random")):
        path = tmp_path / f"game-{players}.json"
        done = hearts("play", "--players", str(players), "--bots", bots, "--seed", f"r{players}",
                      "--target-score", "60", "--record", str(path), "-q", timeout=280)  # fmt: skip
        assert done.returncode == 0, done.stderr
        records.append(str(path))
    # A record whose seed does not give its deals: both report it on stderr and exit 1.
    tampered = json.loads(Path(records[0]).read_text())
    tampered["seed"] = "not-the-seed"
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    files = [*map(str, VECTORS), *records, str(tmp_path / "tampered.json")]
    ours = sim_cli("replay", *files, backend_name=name)
    theirs = hearts("replay", *files, timeout=280)
    assert theirs.returncode == 1
    assert ours.returncode == theirs.returncode, ours.stderr
    assert ours.stdout == theirs.stdout
    assert len(ours.stdout.splitlines()) == len(files)
    assert ours.stderr.count("was not dealt from the revealed seed") == 1


@pytest.mark.parametrize("name", BACKENDS)
def test_replay_bad_files_get_one_line_each(name: str, tmp_path: Path) -> None:
    backend(name)
    (tmp_path / "junk.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    done = sim_cli("replay", str(tmp_path / "missing.json"), str(tmp_path / "junk.json"),
                   str(tmp_path / "list.json"), str(VECTORS[0]), backend_name=name)  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("python -m hearts_client.sim replay: ") for line in lines)
    assert "no such file" in lines[0] and "not JSON" in lines[1] and "not a game record" in lines[2]
    assert "Traceback" not in done.stderr
    assert len(done.stdout.splitlines()) == 1


def test_a_missing_forced_backend_is_one_line() -> None:
    try:
        import hearts_sim  # noqa: F401
    except ImportError:
        done = sim_cli("replay", str(VECTORS[0]), backend_name="native")
        assert done.returncode != 0
        assert "make install" in done.stderr
    done = sim_cli("replay", str(VECTORS[0]), backend_name="fortran")
    assert done.returncode != 0 and "'python' or 'native'" in done.stderr
