"""The web leaderboard of a 1,000-game tournament: time to first byte and page weight.

Builds a tournament in-process with the engine (8 bots at a table of 8, 125 duplicate deals in
all 8 rotations = 1,000 games, random play to 100; the store, the schedule and the records are
the real ones), serves it with the real ``hearts web`` in a subprocess, and measures:

* the leaderboard's first request (the server computes the standings: bootstrap intervals,
  ratings, head-to-head over every stored game) and later ones (cached until a game is added);
* the live table fragment the page fetches when a game is added, the game list (1,000 rows)
  and a replay page;
* each page's weight in bytes, raw and as sent to a client that accepts gzip.

Usage::

    bench/web.py [--games 1000] [--repeat 20] [--json]

Prints readable figures, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.web_server import web_server
from tests.web_store import add_games, config_text, create

TABLE = 8
#: What the leaderboard page loads besides itself (all served by hearts web; no CDN).
LEADERBOARD_ASSETS = ("style.css", "htmx.min.js", "sse.js", "tables.js")
TARGET = 100


def fetch(base: str, path: str, gzipped: bool = False) -> tuple[float, float, int]:
    """One GET: seconds to the first byte, seconds to the last, bytes of the body as sent."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=600)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    response = connection.getresponse()
    first = time.perf_counter() - started
    body = response.read()
    total = time.perf_counter() - started
    connection.close()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status}")
    return first, total, len(body)


def page_figures(base: str, path: str, repeat: int) -> dict[str, Any]:
    cold_first, cold_total, size = fetch(base, path)
    warm = [fetch(base, path) for _ in range(repeat)]
    _, _, compressed = fetch(base, path, gzipped=True)
    return {
        "path": path,
        "first_request_ttfb_ms": round(1000 * cold_first, 1),
        "first_request_total_ms": round(1000 * cold_total, 1),
        "ttfb_ms_median": round(1000 * statistics.median(w[0] for w in warm), 1),
        "ttfb_ms_max": round(1000 * max(w[0] for w in warm), 1),
        "bytes": size,
        "bytes_gzip": compressed,
    }


def measure(games: int, repeat: int) -> dict[str, Any]:
    deals = max(1, games // TABLE)
    bots = [(f"bot{i}", "random") for i in range(TABLE)]
    with tempfile.TemporaryDirectory(prefix="hearts-web-bench-") as tmp:
        folder = Path(tmp) / "t"
        text = config_text(
            bots, table_size=TABLE, deals=deals, duplicate=True, target_score=TARGET, seed="bench"
        )
        started = time.perf_counter()
        scheduled = create(folder, text)
        add_games(folder, scheduled, dict(bots), TARGET)
        build_s = time.perf_counter() - started
        store_bytes = (folder / "tournament.sqlite").stat().st_size
        with web_server(folder) as base:
            # The first page computes the standings; the fragment and the rest reuse them.
            leaderboard = page_figures(base, "/", repeat)
            fragment = page_figures(base, "/fragment/standings", repeat)
            game_list = page_figures(base, "/games", repeat)
            replay = page_figures(base, f"/game/{scheduled[0].key}", repeat)
            assets = {name: fetch(base, f"/static/{name}", gzipped=True)[2] for name in LEADERBOARD_ASSETS}
            assets_raw = {name: fetch(base, f"/static/{name}")[2] for name in LEADERBOARD_ASSETS}
        leaderboard["with_assets_bytes"] = leaderboard["bytes"] + sum(assets_raw.values())
        leaderboard["with_assets_bytes_gzip"] = leaderboard["bytes_gzip"] + sum(assets.values())
    return {
        "games": len(scheduled),
        "bots": TABLE,
        "table_size": TABLE,
        "target_score": TARGET,
        "store_build_seconds": round(build_s, 2),
        "store_bytes": store_bytes,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "leaderboard": leaderboard,
        "standings_fragment": fragment,
        "game_list": game_list,
        "replay": replay,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games in the tournament (a multiple of 8)")
    parser.add_argument("--repeat", type=int, default=20, help="requests per page after the first")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = measure(args.games, args.repeat)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"{figures['games']} games ({figures['bots']} bots, table of {figures['table_size']}), store built "
        f"in-process in {figures['store_build_seconds']} s ({figures['store_bytes'] / 1e6:.1f} MB); "
        f"load average {figures['load_average_1min']} on {figures['cores']} cores"
    )
    for name in ("leaderboard", "standings_fragment", "game_list", "replay"):
        page = figures[name]
        print(
            f"{name:>18} {page['path']:<22} first request: TTFB {page['first_request_ttfb_ms']} ms; "
            f"then TTFB median {page['ttfb_ms_median']} ms (max {page['ttfb_ms_max']}); "
            f"{page['bytes'] / 1024:.1f} KiB ({page['bytes_gzip'] / 1024:.1f} KiB gzipped)"
        )
    board = figures["leaderboard"]
    print(
        f"{'':>18} leaderboard with its CSS and scripts: {board['with_assets_bytes'] / 1024:.1f} KiB "
        f"({board['with_assets_bytes_gzip'] / 1024:.1f} KiB gzipped; the browser caches the scripts)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
