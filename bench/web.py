"""The web leaderboard of large tournaments: time to first byte and page weight.

For each size (``--games``, default 1,000 and 10,000) it builds a tournament folder with the
real schedule and store: ``--bots`` bots (default 8) at a table of 8, every deal in all 8
rotations. The first deal is played for real in-process with the engine (random play to 100,
with records: its replay page is measured); the other games are stored with made-up results
(``tests/helpers/web_store.add_synthetic``: skill + the deal's seat luck + noise, no record), which
fills a 10,000-game store in seconds. Then, as the runner does at the end of a run, the
standings snapshot is computed and kept (``standings.json``; its time is reported as
``snapshot_seconds``: what the first leaderboard request cost before snapshots).

The real ``hearts web`` serves the folder in a subprocess, and it measures:

* ``hearts tournament report --format json`` (a fresh process reading the snapshot), and how
  long ``hearts web`` takes to start (it opens the folder before it listens);
* the leaderboard's first request (the server reads the snapshot) and later ones;
* the live table fragment, the game list (100 rows a page) and a replay page;
* each page's weight in bytes, raw and as sent to a client that accepts gzip;
* without a snapshot (a folder of an older version, or one whose snapshot was deleted): the
  first request's time to first byte (the page says the standings are being computed, with
  ``503`` and ``Refresh: 2``, unless they were ready within its half-second wait) and the
  seconds until the server announces them on its event stream.

Usage::

    bench/web.py [--games 1000 10000] [--bots 8] [--repeat 20] [--json]

Prints readable figures, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hearts_tournaments.tournament.standings_snapshot import compute_snapshot, snapshot_path
from tests.helpers.web_server import web_server
from tests.helpers.web_store import add_games, add_synthetic, config_text, create

TABLE = 8
#: What the leaderboard page loads besides itself (all served by hearts web; no CDN).
LEADERBOARD_ASSETS = ("style.css", "htmx.min.js", "sse.js", "tables.js")
TARGET = 100


def fetch(
    base: str, path: str, gzipped: bool = False, ok: tuple[int, ...] = (200,)
) -> tuple[float, float, int, int]:
    """One GET: seconds to the first byte, seconds to the last, bytes of the body as sent, status."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=600)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    response = connection.getresponse()
    first = time.perf_counter() - started
    body = response.read()
    total = time.perf_counter() - started
    connection.close()
    if response.status not in ok:
        raise SystemExit(f"GET {path}: {response.status}")
    return first, total, len(body), response.status


def page_figures(base: str, path: str, repeat: int) -> dict[str, Any]:
    cold_first, cold_total, size, _ = fetch(base, path)
    warm = [fetch(base, path) for _ in range(repeat)]
    compressed = fetch(base, path, gzipped=True)[2]
    return {
        "path": path,
        "first_request_ttfb_ms": round(1000 * cold_first, 1),
        "first_request_total_ms": round(1000 * cold_total, 1),
        "ttfb_ms_median": round(1000 * statistics.median(w[0] for w in warm), 1),
        "ttfb_ms_max": round(1000 * max(w[0] for w in warm), 1),
        "bytes": size,
        "bytes_gzip": compressed,
    }


def without_snapshot(base: str) -> dict[str, Any]:
    """The first request to a folder without a snapshot, and the wait for the standings."""
    parts = urlsplit(base)
    stream = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=3600)
    stream.request("GET", "/events")
    events = stream.getresponse()
    for _ in range(4):
        events.readline()  # retry, hello, data, blank
    started = time.perf_counter()
    first, total, _, status = fetch(base, "/", ok=(200, 503))
    ready = None
    if status == 503:
        while events.readline() != b"event: games\n":
            pass
        ready = time.perf_counter() - started
        fetch(base, "/")
    stream.close()
    return {
        "first_request_ttfb_ms": round(1000 * first, 1),
        "first_request_total_ms": round(1000 * total, 1),
        "first_request_status": status,
        "standings_ready_seconds": None if ready is None else round(ready, 2),
    }


def report_seconds(folder: Path) -> float:
    """Wall seconds of ``hearts tournament report FOLDER --format json`` (a fresh process)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "report", str(folder), "--format", "json"],
        capture_output=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"report failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def measure(games: int, bots: int, repeat: int) -> dict[str, Any]:
    deals = max(1, games // TABLE)
    names = [(f"bot{i:02d}", "random") for i in range(bots)]
    skill = {name: 3.0 + 0.4 * (i % 5) for i, (name, _) in enumerate(names)}
    with tempfile.TemporaryDirectory(prefix="hearts-web-bench-") as tmp:
        folder = Path(tmp) / "t"
        text = config_text(
            names, table_size=TABLE, deals=deals, duplicate=True, target_score=TARGET, seed="bench"
        )
        started = time.perf_counter()
        scheduled = create(folder, text)
        real = [g for g in scheduled if g.deal == 0]
        add_games(folder, real, dict(names), TARGET, snapshot=False)
        add_synthetic(folder, [g for g in scheduled if g.deal != 0], skill, "bench")
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        snapshot = compute_snapshot(folder)
        snapshot_s = time.perf_counter() - started
        store_bytes = (folder / "tournament.sqlite").stat().st_size
        report_s = report_seconds(folder)
        started = time.perf_counter()
        with web_server(folder) as base:
            start_s = time.perf_counter() - started
            leaderboard = page_figures(base, "/", repeat)
            fragment = page_figures(base, "/fragment/standings", repeat)
            game_list = page_figures(base, "/games", repeat)
            replay = page_figures(base, f"/game/{real[0].key}", repeat)
            assets = {name: fetch(base, f"/static/{name}", gzipped=True)[2] for name in LEADERBOARD_ASSETS}
            assets_raw = {name: fetch(base, f"/static/{name}")[2] for name in LEADERBOARD_ASSETS}
        snapshot_path(folder).unlink()
        with web_server(folder) as base:
            bare = without_snapshot(base)
        leaderboard["with_assets_bytes"] = leaderboard["bytes"] + sum(assets_raw.values())
        leaderboard["with_assets_bytes_gzip"] = leaderboard["bytes_gzip"] + sum(assets.values())
    return {
        "games": len(scheduled),
        "games_played_for_real": len(real),
        "bots": bots,
        "table_size": TABLE,
        "target_score": TARGET,
        "store_build_seconds": round(build_s, 2),
        "snapshot_seconds": round(snapshot_s, 2),
        "snapshot_games": snapshot.standings.games_played,
        "report_seconds": round(report_s, 2),
        "server_start_seconds": round(start_s, 2),
        "store_bytes": store_bytes,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "leaderboard": leaderboard,
        "standings_fragment": fragment,
        "game_list": game_list,
        "replay": replay,
        "without_snapshot": bare,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games",
        type=int,
        nargs="+",
        default=[1000, 10000],
        help="games in each tournament (multiples of 8)",
    )
    parser.add_argument("--bots", type=int, default=8, help="bots in each tournament (at least 8)")
    parser.add_argument("--repeat", type=int, default=20, help="requests per page after the first")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    runs = [measure(games, max(TABLE, args.bots), args.repeat) for games in args.games]
    if args.json:
        print(json.dumps({"runs": runs}))
        return 0
    for figures in runs:
        print(
            f"{figures['games']} games ({figures['bots']} bots, table of {figures['table_size']}; "
            f"{figures['games_played_for_real']} played for real), store built in "
            f"{figures['store_build_seconds']} s ({figures['store_bytes'] / 1e6:.1f} MB); standings computed "
            f"for the snapshot in {figures['snapshot_seconds']} s; load average "
            f"{figures['load_average_1min']} "
            f"on {figures['cores']} cores; `hearts tournament report` {figures['report_seconds']} s, "
            f"`hearts web` started in {figures['server_start_seconds']} s"
        )
        for name in ("leaderboard", "standings_fragment", "game_list", "replay"):
            page = figures[name]
            print(
                f"{name:>18} {page['path']:<22} first request: TTFB {page['first_request_ttfb_ms']} ms; "
                f"then TTFB median {page['ttfb_ms_median']} ms (max {page['ttfb_ms_max']}); "
                f"{page['bytes'] / 1024:.1f} KiB ({page['bytes_gzip'] / 1024:.1f} KiB gzipped)"
            )
        board, bare = figures["leaderboard"], figures["without_snapshot"]
        print(
            f"{'':>18} leaderboard with its CSS and scripts: {board['with_assets_bytes'] / 1024:.1f} KiB "
            f"({board['with_assets_bytes_gzip'] / 1024:.1f} KiB gzipped; the browser caches the scripts)"
        )
        ready = bare["standings_ready_seconds"]
        print(
            f"{'without snapshot':>18} first request: TTFB {bare['first_request_ttfb_ms']} ms, status "
            f"{bare['first_request_status']}"
            + (f"; standings announced after {ready} s" if ready is not None else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
