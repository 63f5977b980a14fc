"""The runtimes a test needs, installed on this machine as ``hearts runtime install`` installs them."""

from __future__ import annotations

import shutil

import pytest

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.runtimes import Installed
from hearts_tournaments.arena.runtimes.build import BuildError
from tests.conftest import ci


def require_runtime(name: str) -> Installed:
    """Runtime ``name``, installed (or brought up to date) now; the test skips when its install
    needs a toolchain this machine lacks (and fails under ``CI=true``)."""
    runtime = runtimes.get(name)
    missing = [tool for tool in runtime.needs if shutil.which(tool) is None]
    if missing:
        reason = f"runtime {name} needs {', '.join(missing)} to be installed"
        if ci():
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        installed, _ = runtimes.install(name)
    except BuildError as exc:
        pytest.fail(f"runtime {name} cannot be installed here: {exc}")
    return installed
