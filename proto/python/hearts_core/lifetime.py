"""Child processes that die with the process that started them, even when it is killed.

A bot process started by the tournament runner, ``hearts host`` or the stdio bridge must not
outlive them: after a ``kill -9`` of the runner alone nothing else would stop it. On Linux the
kernel does it (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, kept across ``exec``): :func:`tied_argv`
prefixes a command with a launcher that sets it on itself and then execs the command in the
same process, util-linux's ``setpriv --pdeathsig KILL --`` where it exists, else
``python -m hearts_core.lifetime``. Both check, once the signal is set, that the parent is
still the one that started them, and run nothing if it died in between. Sandboxed bots are
launched the same way: bubblewrap's ``--die-with-parent`` ties the sandbox to the outer
``bwrap`` only, and an outer ``bwrap`` still starting up when a Ray node was killed was seen to
outlive it. Elsewhere the command is left as it is.

Not a ``preexec_fn``: that makes Python fork the whole parent, which breaks a process that runs
gRPC (its fork handlers), and it is slower than the spawn Python uses otherwise.

The signal is tied to the thread that started the child: start bot processes from a thread that
lives as long as they should (the event loop's).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import sys
from collections.abc import Sequence

#: prctl(2)'s option number for the parent-death signal.
PR_SET_PDEATHSIG = 1
#: A ``setpriv`` that can set the parent-death signal, when there is one.
SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


#: Run by ``sh`` after setpriv has set the signal: exec the command only if the parent that
#: started it (``$1``) is still its parent, else it died before the signal was set.
_CHECK_PARENT = '[ "$PPID" = "$1" ] || exit 137; shift; exec "$@"'


def tied_argv(command: Sequence[str], parent: int | None = None) -> list[str]:
    """``command`` run so that it is killed (SIGKILL) the moment this process ends.

    ``parent`` is the process that will start it (this one unless a test says otherwise).
    """
    if not sys.platform.startswith("linux"):
        return list(command)
    pid = str(os.getpid() if parent is None else parent)
    sh = shutil.which("sh")
    if SETPRIV is not None and sh is not None:
        return [SETPRIV, "--pdeathsig", "KILL", "--", sh, "-c", _CHECK_PARENT, "tied", pid, *command]
    return [sys.executable, "-m", "hearts_core.lifetime", pid, *command]


def _exec_tied(parent: int, command: Sequence[str]) -> None:
    """Sets the parent-death signal on this process, then execs ``command`` in it."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the call: follow it now
        os.kill(os.getpid(), signal.SIGKILL)
    os.execvp(command[0], list(command))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: python -m hearts_core.lifetime PARENT_PID COMMAND [ARG...]", file=sys.stderr)
        sys.exit(2)
    try:
        _exec_tied(int(sys.argv[1]), sys.argv[2:])
    except (OSError, ValueError) as exc:
        print(f"hearts_core.lifetime: cannot start {sys.argv[2]}: {exc}", file=sys.stderr)
        sys.exit(127)
