"""docs/COMPETITION.md says what the portal does: its bot.toml example is accepted as written, and
the limits it names are the code's."""

from __future__ import annotations

import re

from hearts_tournaments.portal import uploads
from hearts_tournaments.portal.uploads import check_archive
from tests.conftest import ROOT
from tests.portal_helpers import LOWEST, tar_gz
from tests.runtime_helpers import require_runtime

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
