"""The committed generated code is exactly what the generator makes, and buf lint passes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

GENERATED = ROOT / "proto" / "python" / "cancellation_hearts" / "v1"


def test_generated_python_code_is_fresh(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "proto" / "gen_python.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "cancellation_hearts" / "v1").iterdir()}
    committed = {p.name: p.read_bytes() for p in GENERATED.iterdir() if p.is_file()}
    stale = sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))
    assert not stale, f"generated code is stale, run `make proto`: {stale}"


def test_buf_lint_passes() -> None:
    buf = shutil.which("buf") or str(Path(sys.executable).parent / "buf")
    result = subprocess.run([buf, "lint"], cwd=ROOT / "proto", capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
