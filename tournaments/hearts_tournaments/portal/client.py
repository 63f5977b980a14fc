"""``hearts submit``'s side: pack a bot's folder and send it to the portal's API (standard library
only), or test the packed archive here with the bot test kit (``hearts submit --check``)."""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import stat
import tarfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hearts_tournaments.portal.uploads import MANIFEST, MAX_ARCHIVE_BYTES, MAX_FILES

if TYPE_CHECKING:
    from hearts_tournaments.kit.report import Report

#: Folders never packed.
SKIPPED = frozenset({".git", "__pycache__", ".venv", "node_modules", "target"})


class SubmitError(Exception):
    """The folder cannot be packed, or the portal refused or could not be reached (one line)."""


def pack(folder: Path) -> bytes:
    """``folder``'s files as a .tar.gz (relative names, no owners, no links).

    Raises:
        SubmitError: no bot.toml, a link or special file inside, too many files or bytes.
    """
    if not (folder / MANIFEST).is_file():
        raise SubmitError(
            f"{folder} holds no {MANIFEST}: write one (command, protocol, description; docs/COMPETITION.md)"
        )
    buffer = io.BytesIO()
    count = 0
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
            for name in sorted(dirs) + sorted(files):
                path = Path(root) / name
                rel = path.relative_to(folder).as_posix()
                st = path.lstat()
                if stat.S_ISLNK(st.st_mode):
                    raise SubmitError(
                        f"{path} is a symlink: the portal takes plain files only; copy what it points to"
                    )
                if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                    raise SubmitError(f"{path} is a device, FIFO or socket: leave it out of the bot's folder")
                count += 1
                if count > MAX_FILES:
                    raise SubmitError(
                        f"{folder} holds more than {MAX_FILES} files: send only what the bot runs"
                    )
                info = archive.gettarinfo(str(path), rel)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    with path.open("rb") as handle:
                        archive.addfile(info, handle)
                else:
                    archive.addfile(info)
    data = buffer.getvalue()
    if len(data) > MAX_ARCHIVE_BYTES:
        raise SubmitError(
            f"{folder} packs to {len(data)} bytes, over {MAX_ARCHIVE_BYTES >> 20} MiB: send less"
        )
    return data


def multipart(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with one file field, and its content type."""
    boundary = "hearts-" + secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _call(request: urllib.request.Request, url: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            body: dict[str, Any] = json.loads(response.read())
            return body
    except urllib.error.HTTPError as exc:
        try:
            why = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            why = exc.reason
        raise SubmitError(f"the portal refused it ({exc.code}): {why}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SubmitError(f"cannot reach the portal at {url}: {reason}") from None
    except ValueError:
        raise SubmitError(
            f"{url} did not answer as a portal (not JSON): is it `hearts web LEAGUE --submissions`?"
        ) from None


def post_archive(url: str, token: str, archive: bytes) -> dict[str, Any]:
    """POSTs the archive to ``URL/api/submissions``; returns the submission as the API gives it."""
    body, kind = multipart("bot", "bot.tar.gz", archive)
    target = url.rstrip("/") + "/api/submissions"
    request = urllib.request.Request(
        target, data=body, method="POST", headers={"Authorization": f"Bearer {token}", "Content-Type": kind}
    )
    return _call(request, target)


def status(url: str, token: str, sid: int) -> dict[str, Any]:
    """The submission ``sid`` as the API gives it."""
    target = url.rstrip("/") + f"/api/submissions/{sid}"
    request = urllib.request.Request(target, headers={"Authorization": f"Bearer {token}"})
    return _call(request, target)


def check_archive_locally(folder: Path, scratch: Path) -> Report:
    """Packs ``folder`` as :func:`pack` does, checks and unpacks the archive as the portal does
    (:mod:`hearts_tournaments.portal.uploads`) into ``scratch``, and runs every level of the bot
    test kit on the bot it makes, in the sandbox the league would run it in.

    Raises:
        SubmitError: the folder cannot be packed, or the portal would refuse the archive.
        KitError: the bot cannot be tested at all.
    """
    from hearts_tournaments.kit.run import run_kit
    from hearts_tournaments.portal.uploads import UploadError, bot_spec, check_archive, unpack

    name = re.sub(r"[^A-Za-z0-9_.-]", "-", folder.resolve().name).strip("-.")[:40] or "bot"
    try:
        archive = pack(folder)
        checked = check_archive(archive)
        target = scratch / "bot"
        unpack(archive, checked, target)
        spec = bot_spec(name, checked, target)
    except UploadError as exc:
        raise SubmitError(f"the portal would refuse it: {exc}") from None
    return run_kit(spec, scratch=scratch / "kit")
