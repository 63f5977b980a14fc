"""Where games are played (:class:`ExecutorKind`), and the form of an address there: what a
tournament's config and a league's settings both name. Light on purpose: reading a config
imports no executor.
"""

from __future__ import annotations

import enum
import re

#: ``host:port`` of an external referee.
SERVER_PATTERN = re.compile(r"[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}")  # fullmatch


class ExecutorKind(enum.StrEnum):
    """Where a tournament's or a league's games are played (see :mod:`.executors`)."""

    #: On this machine: the runner's own referee and bot processes (the default).
    LOCAL = "local"
    #: On a Ray cluster: each game on a node, with that node's referee and bots.
    RAY = "ray"
