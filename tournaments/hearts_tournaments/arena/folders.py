"""Folders only the organiser may read: records and bot logs tell about hands."""

from __future__ import annotations

from pathlib import Path

#: Records, logs and databases are the organiser's alone.
FOLDER_MODE = 0o700


def private_folder(folder: Path) -> None:
    """Creates ``folder`` (and its parents) if needed and makes it mode 0700.

    Raises:
        OSError: if it cannot be created or its mode cannot be set.
    """
    folder.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    folder.chmod(FOLDER_MODE)
