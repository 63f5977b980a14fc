"""The browser the web tests drive: Debian's Chromium, headless, through Playwright.

The browser itself is the ``browser`` fixture of ``tests/conftest.py`` (one per test module); a
test that uses it belongs to the ``browser`` tier.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.helpers.toolchains import absent

#: Debian's Chromium, which Playwright drives (apt-get install -y chromium).
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Milliseconds; generous, the machine is shared.
WAIT_MS = 120_000


def launch_browser() -> Iterator[Any]:
    """Headless Chromium through Playwright, closed at the end (the ``browser`` fixture)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        absent("the browser tests need playwright (pip install playwright)")
    if not CHROMIUM.exists():
        absent(f"the browser tests need Chromium ({CHROMIUM}: apt-get install -y chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
