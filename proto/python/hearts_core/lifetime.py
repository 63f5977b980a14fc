"""Child processes that die with the process that started them, even when it is killed.

A bot process started by the tournament runner, ``hearts host`` or the stdio bridge must not
outlive them: after a ``kill -9`` of the runner alone nothing else would stop it. On Linux
:func:`die_with_parent` asks the kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) to kill the
child the moment its parent ends; it is meant as (part of) a ``preexec_fn``. Sandboxed bots
get the same from bubblewrap's ``--die-with-parent``. Elsewhere it does nothing.

The signal is tied to the thread that started the child: start bot processes from a thread
that lives as long as they should (the event loop's).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

#: prctl(2)'s option number for the parent-death signal.
PR_SET_PDEATHSIG = 1

# Loaded now, in the parent: a child between fork and exec should not load libraries.
_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        _libc = None


def supported() -> bool:
    """Whether children can be tied to their parent's life here."""
    return _libc is not None


def die_with_parent_preexec(then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that ties the child's life to this process, then runs ``then``.

    Returns ``then`` unchanged where this is not supported.
    """
    if _libc is None:
        return then
    parent = os.getpid()
    libc = _libc

    def setup() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call: follow it now
            os.kill(os.getpid(), signal.SIGKILL)
        if then is not None:
            then()

    return setup
