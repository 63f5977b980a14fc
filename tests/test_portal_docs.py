"""docs/COMPETITION.md says what the portal does: its bot.toml example is accepted as written, and
the limits it names are the code's."""

from __future__ import annotations

import inspect
import re

from hearts_tournaments.portal import uploads
from hearts_tournaments.portal.uploads import check_archive
from tests.conftest import ROOT
from tests.helpers.portal import LOWEST, tar_gz
from tests.helpers.runtimes import require_runtime

DOC = (ROOT / "docs" / "COMPETITION.md").read_text()


def test_the_documented_manifest_is_accepted_as_written() -> None:
    require_runtime("python-sdk")  # it names it: a machine without it refuses the manifest
    (manifest,) = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
    checked = check_archive(tar_gz([("bot.toml", manifest.encode()), ("bot.py", LOWEST.encode())]))
    assert checked.manifest.command == ("python3", "bot.py")
    assert checked.manifest.protocol == "grpc"
    assert checked.manifest.runtime == "python-sdk"


def test_the_documented_limits_are_the_codes() -> None:
    text = " ".join(DOC.split())
    assert f"more than {uploads.MAX_ARCHIVE_BYTES >> 20} MiB" in text
    files, unpacked = uploads.MAX_FILES, uploads.MAX_UNPACKED_BYTES >> 20
    assert f"more than {files:,} files and folders or {unpacked} MiB" in text
    assert f"more than {uploads.MAX_RATIO} times its size (beyond the first MiB)" in text
    assert uploads.RATIO_FREE_BYTES == 1024 * 1024
    assert f"over {uploads.MAX_MANIFEST_BYTES // 1024} KiB" in text
    assert uploads.PROGRAM_PATH.replace(":", "`, `") in text.replace("` or `", "`, `")


def test_the_documented_portal_bounds_are_the_codes() -> None:
    from hearts_tournaments.cli.web import serve_command
    from hearts_tournaments.portal import accounts, intake
    from hearts_tournaments.portal.app import Limits

    security = " ".join((ROOT / "docs" / "SECURITY.md").read_text().split())
    text = " ".join(DOC.split())
    limits = Limits()
    assert f"one of the portal's {intake.PLACES} places" in security
    assert f"at most {intake.SHARE} of them one entrant's" in security
    assert f"at most {intake.PLACES} uploads at once" in text and f"at most {intake.SHARE} of them" in text
    assert intake.MAX_UPLOAD_BYTES == uploads.MAX_ARCHIVE_BYTES + 64 * 1024
    assert f"a form's {intake.MAX_FORM_BYTES >> 10} KiB" in security
    assert f"within {limits.body_seconds:g} seconds" in security
    assert f"capped at {limits.entrant_bytes >> 20} MiB" in security
    assert f"lasts {accounts.SESSION_S // 3600} hours" in security
    assert f"at most {accounts.MAX_SESSIONS}" in security
    assert f"Past {accounts.REFUSAL_ADDRESSES:,} addresses" in security
    assert f"no tar header over {uploads.CHUNK >> 10} KiB" in security
    assert f"nor {uploads.MAX_HEADER_BYTES >> 20} MiB of them" in security
    # The CLI's defaults are the portal's.
    defaults = {
        name: parameter.default for name, parameter in inspect.signature(serve_command).parameters.items()
    }
    assert defaults["upload_limit"] == limits.uploads_per_hour
    assert defaults["upload_address_limit"] == limits.uploads_per_address_hour
    assert defaults["login_limit"] == limits.logins_per_minute
    assert defaults["body_timeout"] == limits.body_seconds
    assert defaults["entrant_storage_mb"] << 20 == limits.entrant_bytes


def test_every_test_the_portals_promises_name_exists() -> None:
    security = (ROOT / "docs" / "SECURITY.md").read_text()
    section = security[security.index("### How the portal's promises are tested") :]
    named = set(re.findall(r"`(?:tests/test_portal_\w+\.py::)?(test_\w+)`", section))
    defined = {
        match
        for path in (ROOT / "tests").glob("test_portal_*.py")
        for match in re.findall(r"^def (test_\w+)", path.read_text(), flags=re.M)
    }
    assert len(named) >= 10 and named <= defined, named - defined
