"""The admin token of ``hearts serve``: given, read from a file, or made and written to one.

A referee's admin API is closed by default. ``hearts serve`` without ``--admin-token`` or
``--admin-token-file`` draws a fresh random token and writes it to a file only its user can read
(0600, in a 0700 folder): ``$XDG_STATE_HOME/cancellation-hearts/referee-PORT.token``
(``~/.local/state/...`` when ``XDG_STATE_HOME`` is not set), PORT being the port it listens on,
so that two referees of one user never share a file. It prints the file's path; the organiser
gives the token to the runner as ``HEARTS_ADMIN_TOKEN``. The file is removed when the referee
stops. ``--admin-token-file FILE`` reads FILE, or, when FILE does not exist, writes a fresh token
there the same way (and keeps it: the next start reads it back).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

#: The folder under the user's state folder where generated token files go.
STATE_FOLDER = "cancellation-hearts"


class AdminTokenError(Exception):
    """A token file that cannot be read or written; the message says why, in one line."""


def state_folder() -> Path:
    """``$XDG_STATE_HOME/cancellation-hearts``, or ``~/.local/state/cancellation-hearts``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / STATE_FOLDER


def default_token_file(port: int) -> Path:
    """Where ``hearts serve`` on ``port`` writes the token it makes."""
    return state_folder() / f"referee-{port}.token"


def new_token() -> str:
    """A fresh admin token (256 random bits, hex)."""
    return secrets.token_hex(32)


def read_token_file(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace removed).

    Raises:
        AdminTokenError: if it cannot be read or is empty.
    """
    try:
        token = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise AdminTokenError(f"cannot read the admin token file {path}: {exc}") from None
    if not token:
        raise AdminTokenError(f"the admin token file {path} is empty")
    return token


def write_token_file(path: Path, token: str) -> None:
    """Writes ``token`` to ``path``, readable by this user only (0600; a missing folder is made 0700).

    The file is written beside its final name and renamed into place, never through a symlink.

    Raises:
        AdminTokenError: if it cannot be written.
    """
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as out:
                out.write(token + "\n")
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
    except OSError as exc:
        raise AdminTokenError(f"cannot write the admin token file {path}: {exc.strerror or exc}") from None


def remove_token_file(path: Path) -> None:
    """Removes a token file written by :func:`write_token_file` (if it is still there)."""
    with contextlib.suppress(OSError):
        path.unlink()
