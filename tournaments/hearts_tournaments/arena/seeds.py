"""A tournament's secrets: the deal secret that seeds its deals, and the referee's admin token.

Every deal of a tournament is seeded with ``HMAC-SHA256(deal_secret, the schedule's id of the
deal)`` and every bot's own seed with ``HMAC-SHA256(deal_secret, the schedule's id of the
seat)``. The schedule, the configuration and its ``seed`` are public (a bot may be able to read
the config file); the 256-bit deal secret is drawn when the tournament is created and kept only
in its database (mode 0600). An organiser who wants the same deals again passes the same secret
explicitly: ``--deal-secret-file FILE`` or the environment variable ``HEARTS_DEAL_SECRET`` (64 hex
digits), never in the config file.

Secrets read from the environment are removed from it at once (:func:`take_env_secret`), so that
no bot process started later inherits them.
"""

from __future__ import annotations

import os
import secrets
import string
from pathlib import Path

#: Environment variable holding a deal secret to reuse (64 hex digits).
DEAL_SECRET_ENV = "HEARTS_DEAL_SECRET"
#: Environment variable holding the admin token of an external referee.
ADMIN_TOKEN_ENV = "HEARTS_ADMIN_TOKEN"
#: Bytes in a deal secret.
SECRET_BYTES = 32

_taken: dict[str, str] = {}


class DealSecretError(Exception):
    """A deal secret that cannot be used; the message says why, in one line."""


def new_deal_secret() -> bytes:
    """A fresh deal secret (256 random bits)."""
    return secrets.token_bytes(SECRET_BYTES)


def parse_deal_secret(text: str, source: str) -> bytes:
    """A deal secret from its hex form (surrounding whitespace ignored).

    Args:
        text: The secret as 64 hex digits.
        source: Where it came from, for the error message.

    Raises:
        DealSecretError: if it is not exactly 64 hex digits.
    """
    value = text.strip()
    if len(value) != 2 * SECRET_BYTES or any(c not in string.hexdigits for c in value):
        raise DealSecretError(
            f"{source}: a deal secret is {2 * SECRET_BYTES} hex digits (make one with `openssl rand -hex 32`)"
        )
    return bytes.fromhex(value)


def take_env_secret(name: str) -> str:
    """Reads a secret from the environment and removes it there, so that no child inherits it.

    Later calls in the same process return the value read first.
    """
    if name in os.environ:
        _taken[name] = os.environ.pop(name)
    return _taken.get(name, "")


def read_deal_secret(path: Path | None) -> bytes | None:
    """The deal secret the organiser supplied: from ``path``, else from ``HEARTS_DEAL_SECRET``.

    Returns:
        The secret, or None when neither gives one (the tournament draws its own).

    Raises:
        DealSecretError: if the file cannot be read or either holds no valid secret.
    """
    env = take_env_secret(DEAL_SECRET_ENV)
    if path is not None:
        try:
            text = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise DealSecretError(f"cannot read the deal secret file {path}: {exc}") from None
        return parse_deal_secret(text, str(path))
    if env:
        return parse_deal_secret(env, DEAL_SECRET_ENV)
    return None
