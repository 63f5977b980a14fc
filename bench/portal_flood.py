"""The entrant portal while two entrants flood it: its memory, its queue, and honest entrants'
uploads meanwhile (issue 36's attack, with its own setup).

It builds a league with accounts and serves it with the real ``hearts web LEAGUE --submissions``
(default limits: 12 uploads an hour per entrant). Two entrants then spend their whole hourly
allowance as fast as the portal lets them, ``--threads`` uploads at a time each (sending again a
moment after a 429 for a full share or a 503 for a full portal, until the 429 that says the
hour's allowance is spent), of an archive whose bot cannot play (so every one goes through the
whole check and fails it) and that unpacks to ``--unpacked-mb`` MiB (about 40 times smaller
packed: no archive bomb). From a second after the flood starts, every ``--every`` seconds while
it lasts, another honest entrant (``--honest`` of them) uploads a small bot that plays.
Meanwhile the portal's resident memory (``VmRSS``) and its queue (submissions accepted and not
yet through their sandbox check, read from ``portal.sqlite``) are sampled every 0.2 s until
every accepted upload is checked.

Reported: the portal's memory before the flood, its peak (``VmHWM``, or the largest sample) and
after; the queue's largest length; the flood's answers by status; the honest uploads' answers
by status, the longest wait for an answer, and the longest from sending to passing the sandbox
check; the audit log's rows at the end.

Usage::

    nice -n 10 python bench/portal_flood.py [--unpacked-mb 60] [--threads 2] [--honest 8]
        [--every 15] [--json]

Prints readable figures, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.portal import LOWEST, MANIFEST, Client, filler, make_league, memory, tar_gz
from tests.helpers.web_server import web_process

MIB = 1024 * 1024
#: The flood's bot: it starts, says why not, and exits; the sandbox check fails it.
BROKEN = "import sys\nprint('no luck today', file=sys.stderr)\nsys.exit(3)\n"


def archive(code: str, unpacked_mb: int, salt: int) -> bytes:
    """A bot (``code``) with ``unpacked_mb`` MiB of data that gzip shrinks about 40 times."""
    files = [("bot.toml", MANIFEST.encode()), ("bot.py", f"{code}\n# {salt}\n".encode())]
    if unpacked_mb:
        files.append(("data.bin", filler(unpacked_mb * MIB, salt)))
    return tar_gz(files, level=6)


def waiting(folder: Path) -> int:
    """Submissions accepted and not yet through their sandbox check."""
    with sqlite3.connect(f"file:{folder / 'portal.sqlite'}?mode=ro", uri=True, timeout=30) as db:
        row = db.execute(
            "SELECT COUNT(*) FROM submissions WHERE status = 'pending' "
            "OR (status = 'validating' AND version IS NULL)"
        ).fetchone()
    return int(row[0])


def settled(client: Client, token: str, sid: int) -> float:
    """Waits until submission ``sid`` is through its sandbox check (a version, or an error); when."""
    while True:
        state = client.api_status(token, sid).json()
        if state["status"] == "error" or state["version"] is not None:
            return time.perf_counter()
        time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unpacked-mb", type=int, default=60, help="MiB each flood archive unpacks to")
    parser.add_argument("--threads", type=int, default=2, help="uploads each flooding entrant sends at once")
    parser.add_argument("--honest", type=int, default=8, help="honest entrants, one upload each")
    parser.add_argument("--every", type=float, default=15.0, help="seconds between honest uploads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    floods = {name: archive(BROKEN, args.unpacked_mb, i) for i, name in enumerate(("alice", "bob"))}
    addresses = {"alice": "127.0.0.2", "bob": "127.0.0.3"}  # each entrant from an address of its own
    with tempfile.TemporaryDirectory(prefix="bench-portal-flood-") as tmp:
        folder = Path(tmp) / "lg"
        tokens = make_league(folder, ("alice", "bob", *(f"honest{i}" for i in range(args.honest))))
        with web_process(folder, "--submissions") as (url, process):
            Client(url).get("/login")
            before = memory(process.pid)
            samples: list[tuple[float, int, int]] = []
            stop = threading.Event()

            def sample() -> None:
                while not stop.is_set():
                    samples.append((time.perf_counter(), memory(process.pid)["rss"], waiting(folder)))
                    stop.wait(0.2)

            answers: dict[str, collections.Counter[int]] = {n: collections.Counter() for n in floods}
            accepted: list[tuple[str, int]] = []
            lock = threading.Lock()

            def flood(name: str) -> None:
                # Until the portal says the hourly allowance is spent; a full share (429) or a
                # full portal (503) is tried again a moment later.
                while True:
                    answer = Client(url, source=addresses[name]).api_upload(tokens[name], floods[name])
                    error = answer.json().get("error", "") if answer.status != 202 else ""
                    with lock:
                        answers[name][answer.status] += 1
                        if answer.status == 202:
                            accepted.append((name, answer.json()["id"]))
                    if error.startswith("too many uploads") or answer.status not in (202, 429, 503):
                        return
                    if answer.status != 202:
                        time.sleep(0.2)

            # Honest entrants, one upload each, every --every seconds while the flood lasts.
            honest: list[dict[str, Any]] = []

            def arrive() -> None:
                for i in range(args.honest):
                    if i and stop_honest.wait(args.every):
                        return
                    name, sent = f"honest{i}", time.perf_counter()
                    answer = Client(url, source=f"127.0.1.{i + 1}").api_upload(
                        tokens[name], archive(LOWEST, 0, 100 + i)
                    )
                    with lock:
                        honest.append(
                            {
                                "name": name,
                                "status": answer.status,
                                "sent": sent,
                                "answer_s": time.perf_counter() - sent,
                                "sid": answer.json().get("id"),
                            }
                        )

            sampler = threading.Thread(target=sample)
            sampler.start()
            start = time.perf_counter()
            threads = [threading.Thread(target=flood, args=(n,)) for n in floods for _ in range(args.threads)]
            for thread in threads:
                thread.start()
            time.sleep(1.0)  # the flood is under way
            stop_honest = threading.Event()
            arrivals = threading.Thread(target=arrive)
            arrivals.start()
            client = Client(url)
            while any(t.is_alive() for t in threads) or waiting(folder):
                with lock:
                    unsettled = [h for h in honest if h["status"] == 202 and "checked_s" not in h]
                for h in unsettled:
                    state = client.api_status(tokens[h["name"]], h["sid"]).json()
                    if state["status"] == "error" or state["version"] is not None:
                        h["checked_s"] = time.perf_counter() - h["sent"]
                time.sleep(0.2)
            stop_honest.set()
            arrivals.join()
            for h in honest:
                if h["status"] == 202 and "checked_s" not in h:
                    h["checked_s"] = settled(client, tokens[h["name"]], h["sid"]) - h["sent"]
            for name, sid in accepted:
                settled(client, tokens[name], sid)
            flood_s = time.perf_counter() - start
            stop.set()
            sampler.join()
            after = memory(process.pid)
            with sqlite3.connect(f"file:{folder / 'portal.sqlite'}?mode=ro", uri=True) as db:
                audit_rows = int(db.execute("SELECT COUNT(*) FROM audit").fetchone()[0])
    result: dict[str, Any] = {
        "rss_before_mb": round(before["rss"] / MIB, 1),
        "rss_peak_mb": round(max(after["peak"], *(s[1] for s in samples)) / MIB, 1),
        "rss_after_mb": round(after["rss"] / MIB, 1),
        "queue_max": max(s[2] for s in samples),
        "flood_answers": {n: dict(sorted(c.items())) for n, c in answers.items()},
        "flood_accepted": len(accepted),
        "flood_archive_mb": round(len(floods["alice"]) / MIB, 2),
        "flood_unpacked_mb": args.unpacked_mb,
        "honest_answers": dict(collections.Counter(h["status"] for h in honest)),
        "honest_answer_max_s": round(max(h["answer_s"] for h in honest), 2),
        "honest_checked_max_s": round(
            max((h["checked_s"] for h in honest if "checked_s" in h), default=0), 1
        ),
        "seconds": round(flood_s, 1),
        "audit_rows": audit_rows,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"portal memory: {result['rss_before_mb']} MB before, peak {result['rss_peak_mb']} MB, "
            f"{result['rss_after_mb']} MB after"
        )
        print(f"queue: at most {result['queue_max']} submissions waiting for their check")
        print(
            f"flood: two entrants' hourly uploads of {result['flood_archive_mb']} MiB unpacking to "
            f"{args.unpacked_mb} MiB, {args.threads} at a time: {result['flood_answers']} "
            f"({result['flood_accepted']} accepted)"
        )
        print(
            f"honest uploads meanwhile, one every {args.every:g} s: {result['honest_answers']}, each "
            f"answered within {result['honest_answer_max_s']} s; the accepted ones through their sandbox "
            f"check within {result['honest_checked_max_s']} s of being sent"
        )
        print(f"audit log: {result['audit_rows']} rows after {result['seconds']} s of flood")
    return 0


if __name__ == "__main__":
    sys.exit(main())
