"""Signed results: every stored game is bound to a key that no writer of the output folder holds.

Anything a results folder holds can be recomputed by whoever can write it: the deal secret lies
in the same database, so a forger can re-play each deal with other decisions and rewrite the
rows and record files consistently. What a forger cannot recompute is a signature. So the
organiser's runner signs every game it stores with an Ed25519 key kept outside the folder
(:func:`load_signing_key`: a 0600 file in the organiser's own config folder, never bound into a
sandbox and never passed to a bot), and the signatures form a hash chain:

* ``head_0 = sha256("cancellation-hearts/chain/v1" | tournament id)``;
* game ``i`` (in the order stored) is signed over its tournament id, its index, its key,
  ``sha256`` of its summary and of its record, and ``head_{i-1}``;
* ``head_i = sha256(head_{i-1} | signature_i)``.

A changed game fails its signature; a dropped, inserted or reordered one breaks the signature
of the game after it; a game dropped from the end changes the head and the count. The public key
and the head are printed with the standings and written to ``published.json`` (signed too), the
file the organiser publishes; ``hearts tournament verify --public-key`` checks a folder against
it (docs/SECURITY.md).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import re
import sqlite3
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

#: Names the key file (the organiser's own, outside every results folder).
KEY_ENV = "HEARTS_SIGNING_KEY_FILE"
#: The published summary written beside the database.
PUBLISHED = "published.json"
_CHAIN = b"cancellation-hearts/chain/v1\0"
_GAME = b"cancellation-hearts/game/v1\0"
_PUBLISHED = b"cancellation-hearts/published/v1\0"
_HEADS = b"cancellation-hearts/heads/v1\0"
_PREFIX = "ed25519:"

#: The table of signatures, one row per stored game in the order stored.
SCHEMA = """
CREATE TABLE IF NOT EXISTS signatures (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    signer TEXT NOT NULL,
    signature TEXT NOT NULL,
    head TEXT NOT NULL
)
"""


class SigningError(Exception):
    """The signing key cannot be had or used (one line: what, and the fix)."""


class KeyMissing(SigningError):
    """There is no signing key on this machine (a reader's machine, not the organiser's)."""


def default_key_path() -> Path:
    """``$HEARTS_SIGNING_KEY_FILE``, else ``$XDG_CONFIG_HOME/cancellation-hearts/signing-key``."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "cancellation-hearts" / "signing-key"


def load_signing_key(path: Path | None = None, *, create: bool = True) -> Ed25519PrivateKey:
    """The organiser's signing key, created (0600, in a 0700 folder) on first use.

    As ssh does with a private key, a key file that others could read, write or swap is
    refused: a symbolic link, a file that is not the user's own, or one whose mode gives the
    group or others any access (:func:`read_small`).

    Raises:
        SigningError: it cannot be read or created, it is refused, or the file is not an
            Ed25519 key.
    """
    path = path or default_key_path()
    try:
        data = read_small(path, "the signing key", MAX_KEY_BYTES, private=True)
    except FileNotFoundError:
        if not create:
            raise KeyMissing(f"no signing key at {path}: a tournament run creates one") from None
        return _create(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except ValueError:
        raise SigningError(f"{path} is not a PEM private key: move it away to have a new key made") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path} is not an Ed25519 key: move it away to have a new key made")
    return key


#: The most bytes a key file may hold (an Ed25519 key in PEM is 119).
MAX_KEY_BYTES = 16 * 1024


def read_small(path: Path, what: str, most: int, *, private: bool = False) -> bytes:
    """The bytes of a small file, read through one descriptor: refused when it is not a regular
    file or holds more than ``most`` bytes (only ``most + 1`` are ever read).

    ``private`` (a private key): the file is opened without following a link, and refused too
    when it is a symbolic link, not the user's own, or open to the group or others in any way.

    Raises:
        FileNotFoundError: there is no such file.
        SigningError: one line naming the file, what is wrong and the fix.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if private else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if private and exc.errno == errno.ELOOP:
            raise SigningError(
                f"{what} {path} is a symbolic link (to {os.readlink(path)}): a private key is used "
                f"only from a file of your own, never through a link; set {KEY_ENV} to the key file "
                "itself"
            ) from None
        raise SigningError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SigningError(f"{what} {path} is not a regular file")
        if private:
            _check_private(path, what, info)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(most + 1)
    except OSError as exc:
        raise SigningError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > most:
        raise SigningError(f"{what} {path} holds more than {most} bytes: it is not one")
    return data


def _check_private(path: Path, what: str, info: os.stat_result) -> None:
    """Refuses a private file that is not the user's own or is open to others (as ssh does)."""
    if info.st_uid != os.geteuid():
        raise SigningError(
            f"{what} {path} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()}): whoever "
            f"owns it can replace it; use a key of your own ({KEY_ENV}, or move it away to have one made)"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise SigningError(
            f"{what} {path} is open to others (mode {mode:04o}): anyone who can read it signs "
            f"results in your name, anyone who can write it swaps the key; run `chmod 600 {path}`"
        )


def read_json_object(path: Path, what: str, most: int) -> dict[str, Any]:
    """A JSON object from a file of at most ``most`` bytes (:func:`read_small`).

    Raises:
        FileNotFoundError: there is no such file.
        SigningError: it is larger, not JSON (too deep included), or not an object: one line.
    """
    data = read_small(path, what, most)
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        raise SigningError(f"{what} {path} is not JSON (or nested too deep)") from None
    if not isinstance(body, dict):
        raise SigningError(f"{what} {path} is not a JSON object")
    return body


def _create(path: Path) -> Ed25519PrivateKey:
    """A new key, written whole to a temporary file and linked into place: a process that finds
    the file finds all of it, and of two processes making one at once, both use the first."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".signing-key-", dir=path.parent)  # mode 0600
    except OSError as exc:
        raise SigningError(f"cannot create the signing key {path}: {exc.strerror}; set {KEY_ENV}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)
    except FileExistsError:  # another process made it first: use that one
        return load_signing_key(path, create=False)
    except OSError as exc:
        raise SigningError(f"cannot create the signing key {path}: {exc.strerror}; set {KEY_ENV}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return key


def public_text(key: Ed25519PublicKey) -> str:
    """``ed25519:`` and the raw public key in base64 (url-safe, unpadded)."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_public(text: str) -> Ed25519PublicKey:
    """The key :func:`public_text` wrote.

    Raises:
        SigningError: it is not such a key.
    """
    body = text.strip().removeprefix(_PREFIX)
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise SigningError(
            f"{text.strip()[:60]!r} is not a public key: expected ed25519:… as published"
        ) from None


def first_head(tournament_id: str) -> str:
    """The chain's head before any game."""
    return hashlib.sha256(_CHAIN + tournament_id.encode()).hexdigest()


def _message(tournament_id: str, index: int, key: str, summary: str, record: str, head: str) -> bytes:
    parts = (
        tournament_id,
        str(index),
        key,
        hashlib.sha256(summary.encode()).hexdigest(),
        hashlib.sha256(record.encode()).hexdigest(),
        head,
    )
    return _GAME + "\0".join(parts).encode()


def _next_head(head: str, signature: str) -> str:
    return hashlib.sha256(bytes.fromhex(head) + bytes.fromhex(signature)).hexdigest()


class Signer:
    """Signs the games a store writes, extending its chain (rows of :data:`SCHEMA`)."""

    def __init__(self, key: Ed25519PrivateKey, tournament_id: str) -> None:
        self.key = key
        self.public = public_text(key.public_key())
        self.tournament_id = tournament_id

    def sign_next(self, db: sqlite3.Connection, key: str, summary: str, record: str) -> None:
        """Signs one game inside the caller's open transaction, after the chain's last.

        Raises:
            SigningError: the game was signed before (its row was removed from the database
                since: the chain would be forked; ``verify`` shows what changed).
        """
        if db.execute("SELECT 1 FROM signatures WHERE key = ?", (key,)).fetchone() is not None:
            raise SigningError(
                f"game {key} was signed before but is no longer stored: the database was changed "
                "outside the runner; `hearts tournament verify` shows what changed"
            )
        row = db.execute("SELECT seq, head FROM signatures ORDER BY seq DESC LIMIT 1").fetchone()
        index, head = (0, first_head(self.tournament_id)) if row is None else (int(row[0]) + 1, str(row[1]))
        signature = self.key.sign(_message(self.tournament_id, index, key, summary, record, head)).hex()
        db.execute(
            "INSERT INTO signatures (seq, key, signer, signature, head) VALUES (?, ?, ?, ?, ?)",
            (index, key, self.public, signature, _next_head(head, signature)),
        )

    def publish(
        self, folder: Path, name: str, db: sqlite3.Connection, extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Writes ``published.json``: the public key, the count and the head, and ``extra`` (a
        tournament's completeness against its schedule), signed; returns it."""
        count, head = chain_state(db, self.tournament_id)
        body: dict[str, Any] = {
            "format": PUBLISHED_FORMAT,
            "tournament": name,
            "tournament_id": self.tournament_id,
            "public_key": self.public,
            "games": count,
            "chain_head": head,
            **(extra or {}),
        }
        body["signature"] = self.key.sign(_PUBLISHED + _canonical(body)).hex()
        _write_whole(folder / PUBLISHED, json.dumps(body, indent=2) + "\n")
        return body

    def head_line(self, block: int, games: int, head: str) -> str:
        """One line of a league's ``heads.jsonl``: the chain's count and head once ``block`` was
        stored, signed."""
        body: dict[str, Any] = {
            "league_id": self.tournament_id,
            "block": block,
            "games": games,
            "chain_head": head,
        }
        body["signature"] = self.key.sign(_HEADS + _canonical(body)).hex()
        return json.dumps(body, separators=(",", ":")) + "\n"


def read_head_line(line: bytes, key: Ed25519PublicKey) -> tuple[str, int, int, str]:
    """``(league_id, block, games, head)`` of a line :meth:`Signer.head_line` wrote, once its
    signature holds under ``key``.

    Raises:
        SigningError: not such a line, or not signed by ``key``.
    """
    try:
        body = json.loads(line)
        if not isinstance(body, dict):
            raise ValueError
        key.verify(bytes.fromhex(str(body["signature"])), _HEADS + _canonical(body))
        league, block, games, head = body["league_id"], body["block"], body["games"], body["chain_head"]
    except (ValueError, KeyError, RecursionError):
        raise SigningError("not a line of heads signed by the key") from None
    except InvalidSignature:
        raise SigningError("its signature does not hold under the key") from None
    if not (isinstance(league, str) and type(block) is int and type(games) is int and isinstance(head, str)):
        raise SigningError("its fields are not a league id, a block, a count and a head")
    return league, block, games, head


def chain_heads(rows: Sequence[tuple[int, str, str, str, str]], tournament_id: str) -> list[str]:
    """The chain's head after 0, 1, 2, ... games, as stored (``rows``: the signatures table)."""
    return [first_head(tournament_id), *(row[4] for row in rows)]


def _write_whole(path: Path, text: str) -> None:
    """Replaces ``path`` by ``text`` at once (a reader finds the old file or the new one)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def chain_state(db: sqlite3.Connection, tournament_id: str) -> tuple[int, str]:
    """How many games the chain holds, and its head."""
    row = db.execute("SELECT seq, head FROM signatures ORDER BY seq DESC LIMIT 1").fetchone()
    return (0, first_head(tournament_id)) if row is None else (int(row[0]) + 1, str(row[1]))


def _canonical(body: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in body.items() if k != "signature"}, sort_keys=True).encode()


#: The most bytes of a ``published.json`` read (one is under 1 KB).
MAX_PUBLISHED_BYTES = 64 * 1024
#: ``published.json`` with ``format`` 2 says whether a tournament is complete against its
#: schedule (``played``, ``scheduled``, ``schedule_sha256``, ``complete``); one without
#: ``format`` was written before it did.
PUBLISHED_FORMAT = 2
#: A chain head: a sha256, in hex.
HEAD_PATTERN = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Published:
    """What a reader of published results holds: the key, and optionally a point of the chain.

    Attributes:
        public_key: The key every game must be signed by.
        games: The count of games at the point (None: no count).
        chain_head: The chain's head after those games (None: no point). Without ``games``, the
            head must be somewhere in the chain (a head a reader kept, of any length).
        body: The signed ``published.json`` that names the key (empty when none does).
        source: Where ``body`` comes from, as verify says it.
        point: Where the point comes from when not from ``body`` (``--games`` and ``--head``).
        kept: Whether the point was kept by the reader (given on the command line, or the file
            given), rather than read from the folder, whose writers can replace it.
    """

    public_key: Ed25519PublicKey
    games: int | None = None
    chain_head: str | None = None
    _: KW_ONLY
    body: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    point: str = ""
    kept: bool = False

    @property
    def point_source(self) -> str:
        """Where the point of the chain comes from, as verify says it."""
        return self.point or self.source


def read_published(text_or_path: str) -> Published:
    """``--public-key``: a key as printed, or the path of a ``published.json`` (checked).

    Raises:
        SigningError: neither, or a published file that is too large, not JSON, or whose
            signature does not hold.
    """
    path = Path(text_or_path)
    if text_or_path.strip().startswith(_PREFIX) or not (path.exists() or path.is_symlink()):
        return Published(parse_public(text_or_path))
    return read_published_file(path, kept=True)


def read_published_file(path: Path, *, kept: bool) -> Published:
    """A ``published.json``: its key, its point of the chain and its fields, once its signature holds
    (at most :data:`MAX_PUBLISHED_BYTES` are read).

    Raises:
        SigningError: one line: too large, not JSON, not signed by the key it names, or a count
            or head of the wrong shape.
    """
    body = read_json_object(path, "the published file", MAX_PUBLISHED_BYTES)
    try:
        key = parse_public(str(body["public_key"]))
        key.verify(bytes.fromhex(str(body["signature"])), _PUBLISHED + _canonical(body))
    except (KeyError, ValueError, InvalidSignature, SigningError):
        raise SigningError(f"{path} is not a published.json signed by the key it names") from None
    games, head = body.get("games"), body.get("chain_head")
    if type(games) is not int or games < 0 or not isinstance(head, str) or not HEAD_PATTERN.fullmatch(head):
        raise SigningError(f"{path}: its games and chain_head are not a count and a sha256")
    where = f"the published file {path}" if kept else f"the folder's own {PUBLISHED}"
    return Published(key, games, head, body=body, source=where, kept=kept)


def verify_chain(
    games: Iterable[tuple[str, str, str]],
    rows: Sequence[tuple[int, str, str, str, str]],
    tournament_id: str,
    expected: Published,
) -> list[str]:
    """Checks every game's signature and the chain; one line per problem, naming the game.

    Args:
        games: ``(key, summary, record)`` of every stored game.
        rows: The signatures table, ``(seq, key, signer, signature, head)``, by seq.
        tournament_id: The tournament's id.
        expected: The key, and the point of the chain (count and head) it must pass through.
    """
    problems: list[str] = []
    stored = {key: (summary, record) for key, summary, record in games}
    wanted = public_text(expected.public_key)
    # Each row is checked against the row before it as stored, so a break is reported once, at
    # the game where it is, and the rest of the chain still speaks for itself.
    head, before = first_head(tournament_id), -1
    signed: set[str] = set()
    for seq, key, signer, signature, stored_head in rows:
        signed.add(key)
        if seq != before + 1:
            problems.append(
                f"{key}: signed as game {seq} after game {before}: a game was dropped, inserted or "
                "reordered before it"
            )
        if signer != wanted:
            problems.append(f"{key}: signed by {signer[:24]}…, not by the tournament's key {wanted[:24]}…")
        game = stored.get(key)
        if game is None:
            problems.append(f"{key}: signed, but not stored: a game was dropped")
        else:
            message = _message(tournament_id, seq, key, game[0], game[1], head)
            try:
                expected.public_key.verify(bytes.fromhex(signature), message)
            except (InvalidSignature, ValueError):
                problems.append(
                    f"{key}: its signature does not hold: the game was changed, or the chain before it "
                    "was (a game dropped, inserted or reordered)"
                )
        try:
            if stored_head != _next_head(head, signature):
                problems.append(f"{key}: the stored chain head is not the chain's")
        except ValueError:
            problems.append(f"{key}: its signature is not hex")
        head, before = stored_head, seq
    problems.extend(f"{key}: stored, but never signed" for key in stored if key not in signed)
    if expected.body and expected.body.get("tournament_id") != tournament_id:
        problems.append(f"published: {expected.source} is another tournament's or league's, not this one's")
    problems.extend(_through_point(chain_heads(rows, tournament_id), expected))
    return problems


def _through_point(heads: Sequence[str], expected: Published) -> list[str]:
    """The chain must pass through the published point: its head after ``games`` games is the
    published head (games signed after it are later games of the same chain, each checked)."""
    games, head = expected.games, expected.chain_head
    signed = len(heads) - 1
    where = f" ({expected.point_source})" if expected.point_source else ""
    if games is not None and games > signed:
        return [
            f"chain: {signed} signed games, but {games} were published{where}: games were dropped "
            "from the end"
        ]
    if head is None:
        return []
    if games is not None and heads[games] != head:
        return [
            f"chain: its head after {games} games is not the published head{where}: games were dropped, "
            "added or changed"
        ]
    if games is None and head not in heads:
        return [
            f"chain: the head {head[:16]}… kept by the reader is nowhere in the chain: games were dropped "
            "since it was kept (a rollback), or changed, or this is another chain"
        ]
    return []


def point_checked(expected: Published | None) -> str:
    """What verify's closing line says of the count and head: checked against a point the reader
    kept, or not (then how to)."""
    if expected is not None and expected.kept:
        return f"the count and chain head hold against {expected.point_source}"
    return (
        "the count and chain head were not checked against any kept outside the folder (its own "
        f"{PUBLISHED} can be replaced by an earlier one): to catch games dropped from the end, pass "
        "--games N --head HEX as published with the standings"
    )


def expected_signer(
    output: Path, public_key: str | None, games: int | None = None, head: str | None = None
) -> tuple[Published | None, str, list[str]]:
    """The key the signatures of ``output`` must hold and the point of the chain they must pass
    through, where the key came from, and problems found on the way.

    The key, in order: ``public_key`` (a key as printed, or a published file); the organiser's
    own key when it is on this machine; the key the folder's ``published.json`` names (which
    whoever can write the folder could replace: said so). The point: ``games`` and ``head``
    when given (``head`` alone: anywhere in the chain), else the published file given, else the
    folder's own ``published.json`` when it names the same key.

    Raises:
        SigningError: ``public_key`` is neither a key nor a published file, ``head`` is not a
            chain head, ``games`` comes without ``head``, or a point comes with a published file.
    """
    if head is not None and not HEAD_PATTERN.fullmatch(head):
        raise SigningError(f"--head {head[:80]!r} is not a chain head: 64 hex digits, as published")
    if games is not None and head is None:
        raise SigningError("--games needs --head: the chain's head after that many games, as published")
    problems: list[str] = []
    in_folder = output / PUBLISHED
    folder_claim: Published | None = None
    if in_folder.exists() or in_folder.is_symlink():
        try:
            folder_claim = read_published_file(in_folder, kept=False)
        except SigningError as exc:
            problems.append(f"published: {exc}")
    expected, signed_by = _expected_key(public_key, folder_claim, in_folder, problems)
    if expected is not None and head is not None:
        if expected.kept:
            raise SigningError(
                "--games and --head go with a key, not with a published file (it holds its own)"
            )
        expected = replace(
            expected, games=games, chain_head=head, point="--games and --head given", kept=True
        )
    return expected, signed_by, problems


def _expected_key(
    public_key: str | None, folder_claim: Published | None, in_folder: Path, problems: list[str]
) -> tuple[Published | None, str]:
    """The key (with the point the folder or the file given holds), and where it came from."""
    if public_key is not None:
        given = read_published(public_key)
        own_file = not given.body or Path(public_key).resolve() == in_folder.resolve()
        if folder_claim is not None and _same(folder_claim, given) and own_file:
            given = folder_claim  # (the folder's own file is no point kept outside it)
        return given, "by the key given"
    try:
        own = load_signing_key(create=False).public_key()
    except KeyMissing:
        own = None
    except SigningError as exc:
        problems.append(f"signatures: the organiser's key on this machine is not used: {exc}")
        own = None
    if own is not None:
        mine = Published(own)
        if folder_claim is not None and not _same(folder_claim, mine):
            problems.append(f"published: {in_folder} names another key than the organiser's on this machine")
        elif folder_claim is not None:
            mine = folder_claim
        return mine, f"by the organiser's key {public_text(own)}"
    if folder_claim is not None:
        return (
            folder_claim,
            f"by the key {public_text(folder_claim.public_key)} that the folder itself names: "
            "whoever can write the folder can replace it; pass --public-key with the key published "
            "with the standings",
        )
    problems.append(
        "signatures: no key to check them against (no published.json, no signing key on this machine): "
        "pass --public-key with the key published with the standings"
    )
    return None, ""


def _same(a: Published, b: Published) -> bool:
    return public_text(a.public_key) == public_text(b.public_key)


def signing_key_for(output: Path) -> Ed25519PrivateKey:
    """The organiser's signing key (:func:`load_signing_key`), never one kept in ``output``.

    Raises:
        SigningError: it cannot be had, or it lies inside the output folder.
    """
    path = default_key_path()
    where = Path(os.path.realpath(path))
    out = output.resolve()
    if where == out or out in where.parents:
        raise SigningError(
            f"the signing key {path} lies inside the output folder {out}, which others may read or "
            f"write: keep it elsewhere ({KEY_ENV})"
        )
    return load_signing_key(path)
