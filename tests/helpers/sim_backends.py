"""The simulator backends a test runs against: ``python`` always, ``native`` when built.

Tests parametrize over :data:`BACKENDS` and ask :func:`backend` for the module-like namespace
of one backend (its ``Game``, ``VecGame``, ``IllegalAction`` and constants). The native module
``hearts_sim`` is built by ``make install``; without it the native cases skip, naming that fix
(and fail under ``CI=true``, see conftest).
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

BACKENDS = ["python", "native"]


def backend(name: str) -> ModuleType:
    """The backend module: ``hearts_client.sim._python``, or the native ``hearts_sim``."""
    if name == "python":
        return importlib.import_module("hearts_client.sim._python")
    try:
        return importlib.import_module("hearts_sim")
    except ImportError:
        pytest.skip("the native simulator hearts_sim is not built: run `make install` (needs cargo)")
