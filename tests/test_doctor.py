"""``hearts doctor`` checks more than the sandbox: the example bots' toolchains, Chromium for the
web tests, the SDK, and whether ``python`` from PATH starts inside the real sandbox."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena.sandbox import find_bwrap
from hearts_tournaments.cli.doctor import CHROMIUM, TOOLCHAINS
from tests.helpers.shared import shim_folder


def doctor(path: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "doctor", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PATH=path),
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return {f["name"]: f for f in json.loads(result.stdout)["checks"]}


@pytest.mark.timeout(300)
def test_doctor_checks_toolchains_chromium_the_sdk_and_python_on_path(tmp_path: Path) -> None:
    if find_bwrap() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bwrap is missing: apt-get install bubblewrap")
        pytest.skip("bwrap is missing")
    # A python that starts in the sandbox and has the SDK: this virtualenv's, as an activated
    # virtualenv puts it first on PATH.
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "python").exists()
    checks = doctor(f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    for language, tools in TOOLCHAINS.items():
        assert checks[f"toolchain {language}"]["available"] is all(shutil.which(t) for t in tools)
    assert checks["chromium"]["available"] is CHROMIUM.exists()
    assert checks["sdk"]["available"] is True and "cancellation-hearts-sdk" in checks["sdk"]["detail"]
    assert checks["python on PATH"]["available"] is True, checks["python on PATH"]
    assert "imports the SDK" in checks["python on PATH"]["detail"]

    # A shim: it works outside, but runs a file the sandbox does not show.
    shims = shim_folder(tmp_path)
    shimmed = doctor(f"{shims}{os.pathsep}{os.environ['PATH']}")["python on PATH"]
    assert shimmed["available"] is False
    assert "does not start in the sandbox" in shimmed["detail"] and "realpython" in shimmed["detail"]

    text = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "doctor"], capture_output=True, text=True, timeout=240
    ).stdout
    for name in ("toolchain go:", "chromium:", "sdk:", "python on PATH:"):
        assert sum(line.startswith(name) for line in text.splitlines()) == 1, text
