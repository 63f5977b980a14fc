"""The library functions behind ``hearts league ...``: each command is one plain function."""

from __future__ import annotations

import csv
import datetime
import io
import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hearts_client.bots import BUILTIN_BOTS
from hearts_core.record import GameRecord, RecordFileError
from hearts_core.replay import replay
from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotProtocol, BotSpec
from hearts_tournaments.arena.entrants import snapshot_spec
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.arena.snapshot import STORE, SnapshotError
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.play import league_table
from hearts_tournaments.league.rating_models import DEFAULT_RATING, RATING_MODELS, Column
from hearts_tournaments.league.ratings import TableRow
from hearts_tournaments.league.store import (
    HEADS,
    MAX_HEAD_LINE,
    LeagueStore,
    frozen_refusal,
    spec_to_json,
    version_hash,
)
from hearts_tournaments.results import signing
from hearts_tournaments.results.audit import ALPHA, AuditReport, read_games
from hearts_tournaments.results.audit import audit as audit_games

#: Formats of ``show``.
FORMATS = ("table", "json", "csv", "markdown")


def init_league(folder: Path, config: LeagueConfig, deal_secret: bytes | None = None) -> LeagueStore:
    """Creates a league in ``folder`` (see :meth:`LeagueStore.create`)."""
    return LeagueStore.create(folder, config, deal_secret)


def make_spec(
    name: str,
    command: str | None,
    builtin: str | None,
    options: Sequence[str] = (),
    files: Sequence[Path] = (),
    sandbox: str | None = None,
    protocol: str = "grpc",
    workdir: Path | None = None,
    runtime: str | None = None,
) -> BotSpec:
    """A bot spec from ``add``/``update``'s options.

    Raises:
        LeagueError: not exactly one of command and builtin, an unknown built-in, a bad option,
            an unknown runtime.
    """
    if (command is None) == (builtin is None):
        raise LeagueError("give exactly one of --command and --builtin")
    where = (workdir or Path.cwd()).resolve()
    if sandbox is not None and sandbox not in tuple(SandboxKind):
        raise LeagueError(f'--sandbox must be "bwrap" or "none", not {sandbox!r}')
    kind = SandboxKind(sandbox) if sandbox else None
    if builtin is not None:
        if builtin not in BUILTIN_BOTS:
            raise LeagueError(
                f"unknown built-in bot {builtin!r}: use one of {', '.join(sorted(BUILTIN_BOTS))}"
            )
        if files:
            raise LeagueError("only command bots have files of their own")
        if runtime is not None:
            raise LeagueError(
                "only command bots take --runtime: built-in bots run on the runner's own Python"
            )
        parsed: dict[str, int | float | str | bool] = {}
        for item in options:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise LeagueError(f"--option takes KEY=VALUE, not {item!r}")
            parsed[key] = _plain(value)
        try:
            BUILTIN_BOTS[builtin](None, **parsed)
        except (TypeError, ValueError) as exc:
            raise LeagueError(f"options not accepted by {builtin!r}: {exc}") from None
        return BotSpec(name=name, builtin=builtin, options=parsed, workdir=where, sandbox=kind)
    assert command is not None
    if options:
        raise LeagueError("only built-in bots take --option: pass flags in --command")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise LeagueError(f"--command does not parse: {exc}") from None
    if not argv:
        raise LeagueError("--command is empty")
    if protocol not in tuple(BotProtocol):
        raise LeagueError(f'--protocol must be "grpc" or "stdio", not {protocol!r}')
    if runtime is not None and runtime not in runtimes.RUNTIMES:
        raise LeagueError(
            f"--runtime must be one of {runtimes.names()} (`hearts runtime list`), not {runtime!r}"
        )
    resolved = tuple((where / f).resolve() for f in files) if files else None
    return BotSpec(
        name=name,
        command=argv,
        workdir=where,
        files=resolved,
        sandbox=kind,
        protocol=BotProtocol(protocol),
        runtime=runtime,
    )


def _plain(text: str) -> int | float | str | bool:
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def snapshot_files(store: LeagueStore, spec: BotSpec) -> BotSpec:
    """``spec`` with its files copied into the league's snapshot store (see :func:`add_version`).

    Raises:
        LeagueError: they are, hold or lie inside the league folder, or cannot be copied as they are.
    """
    try:
        return snapshot_spec(spec, store.folder / STORE, (store.folder.resolve(),))
    except SnapshotError as exc:
        raise LeagueError(str(exc)) from None


def add_version(
    store: LeagueStore,
    spec: BotSpec,
    update: bool = False,
    pinned: float | None = None,
    keep: bool = False,
    team: str | None = None,
) -> str:
    """Adds an entrant (or a new version of one): it is pending until ``run`` validates it.

    A command bot's files are copied here, once, into the league's read-only snapshot store
    (:mod:`hearts_tournaments.arena.snapshot`): the version is that copy, validated and played as it
    is, whatever later becomes of the files. Files that are, hold or lie inside the league
    folder, or hold a symlink leading out of them, are refused.

    ``update`` retires the entrant's other versions unless ``keep``: kept versions go on
    playing, never at one table with another version of their entrant. ``team`` declares the
    entrant's team ("" leaves every team): it never sits at a table with another of its team.

    Raises:
        LeagueError: the files cannot be snapshotted, or the command is not possible.
    """
    spec = snapshot_files(store, spec)
    command: dict[str, Any] = {
        "op": "update" if update else "add",
        "name": spec.name,
        "spec": spec_to_json(spec),
        "hash": version_hash(spec),
        "keep": keep,
    }
    if pinned is not None:
        command["pinned"] = pinned
    if team is not None:
        command["team"] = team
    return store.execute(command)


def set_team(store: LeagueStore, name: str, team: str) -> str:
    """Puts entrant ``name`` in ``team`` ("": in none): never at a table with another of it."""
    return store.execute({"op": "team", "name": name, "team": team})


def link(store: LeagueStore, a: str, b: str, linked: bool = True, accounts: Sequence[str] = ()) -> str:
    """Links (or unlinks) ``a`` and ``b``: they, and every entrant linked to either, never sit at
    one table. Each must be an entrant of the league or one of ``accounts`` (the portal's, which
    may submit later).

    Raises:
        LeagueError: a name is neither, or (unlinking) the two are not linked.
    """
    entrants = {v.entrant for v in store.versions()}
    for name in (a, b):
        if linked and name not in entrants and name not in accounts:
            raise LeagueError(
                f"{name!r} is neither an entrant of the league nor a portal account: see "
                "`hearts league show` and `hearts league entrant list`"
            )
    return store.execute({"op": "link" if linked else "unlink", "a": a, "b": b})


def apart(store: LeagueStore) -> dict[str, Any]:
    """Who is kept apart: the teams declared, the links made, and the sides they form (only
    sides of two or more entrants)."""
    sides: dict[str, list[str]] = {}
    for entrant, side in store.sides().items():
        sides.setdefault(side, []).append(entrant)
    return {
        "teams": store.teams(),
        "links": [list(pair) for pair in store.links()],
        "sides": [members for members in sides.values() if len(members) > 1],
    }


def parse_time(text: str) -> float:
    """An ISO 8601 time with its zone (``2026-12-24T18:00:00Z``, ``...+01:00``): seconds since the epoch.

    Raises:
        LeagueError: not such a time (a time without a zone is refused: whose would it be?).
    """
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise LeagueError(f"{text!r} is not an ISO 8601 time: write e.g. 2026-12-24T18:00:00Z") from None
    if when.tzinfo is None:
        raise LeagueError(f"{text!r} has no time zone: add one, e.g. {text.strip()}Z for UTC")
    return when.timestamp()


def freeze(store: LeagueStore, at: float | None = None) -> str:
    """Freezes the season at ``at`` (default: now): from then on no version is added."""
    return store.execute({"op": "freeze", "at": store.clock() if at is None else at})


def unfreeze(store: LeagueStore) -> str:
    """Opens a frozen season again."""
    return store.execute({"op": "unfreeze"})


def closed(store: LeagueStore) -> str | None:
    """Why no new version is accepted now (the season froze), or None."""
    return frozen_refusal(store.frozen_at(), store.clock())


def set_status(store: LeagueStore, name: str, op: str) -> str:
    """``retire`` or ``unretire`` a version (``NAME`` means its newest)."""
    return store.execute({"op": op, "name": name})


def pin(store: LeagueStore, name: str, value: float | None) -> str:
    """Pins a reference version's official strength (None unpins it)."""
    return store.execute({"op": "pin", "name": name, "value": value})


def render_table(
    rows: Sequence[TableRow], form: str, columns: Sequence[Column] = RATING_MODELS[DEFAULT_RATING].columns
) -> str:
    """The official table as text, JSON, CSV or Markdown, with the rating model's ``columns``
    (the JSON carries its parameters)."""
    if form == "json":
        return json.dumps([r.to_json() for r in rows], indent=2)
    head = ["rank", "version", "status", "strength", "interval", "blocks", "games", "mark"]
    head += [c.name for c in columns]

    def cells(r: TableRow) -> list[str]:
        def f(x: float | None) -> str:
            return "-" if x is None else f"{x:+.2f}"

        interval = "-" if r.low is None or r.high is None else f"[{r.low:+.2f}, {r.high:+.2f}]"
        mark = ("pinned " if r.pinned is not None else "") + ("provisional" if r.provisional else "")
        return [
            str(r.rank),
            r.version,
            r.status,
            f(r.strength),
            interval,
            str(r.blocks),
            str(r.games),
            mark.strip(),
            *(c.text(r.state) for c in columns),
        ]

    body = [cells(r) for r in rows]
    if form == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(head)
        writer.writerows(body)
        return out.getvalue().rstrip("\n")
    if form == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in body]
    return "\n".join(lines)


def show(store: LeagueStore, form: str = "table", everyone: bool = False, online: bool = True) -> str:
    """The official table (refitted from every stored block) in ``form``."""
    if form not in FORMATS:
        raise LeagueError(f"--format must be one of {', '.join(FORMATS)}, not {form!r}")
    return render_table(league_table(store, everyone, online), form, store.rating.columns)


def info(store: LeagueStore, name: str) -> dict[str, Any]:
    """A version's games, rating history, head-to-head, seat-position effect, faults, events."""
    version = store.resolve(name)
    vid = version.id
    games = store.games(version=vid)
    rated = [(key, block, data) for key, block, _v, data in games if block is not None]
    seat_places: dict[int, list[int]] = {}
    heads: dict[str, list[int]] = {}
    faults = 0
    failed = 0
    for _key, _block, data in rated:
        seats = data["seats"]
        places = data["places"]
        for seat, who in enumerate(seats):
            if who != vid:
                continue
            seat_places.setdefault(seat, []).append(places[seat])
            faults += data["faults"][seat]
            for other, rival in enumerate(seats):
                if rival != vid:
                    record = heads.setdefault(rival, [0, 0, 0])
                    mine, theirs = places[seat], places[other]
                    record[0 if mine < theirs else 1 if mine == theirs else 2] += 1
        if any(
            data["retired"][s] or data["crashed"][s] or data["never_answered"][s]
            for s, who in enumerate(seats)
            if who == vid
        ):
            failed += 1
    rating = store.ratings().get(vid)
    return {
        "version": vid,
        "status": version.status,
        "note": version.note,
        "hash": version.hash,
        "spec": spec_to_json(version.spec),
        "pinned": version.pinned,
        "blocks": rating.blocks if rating else 0,
        "games": len(rated),
        "validation": [key for key, block, v, _d in games if block is None and v == vid],
        "last_block": rating.last_block if rating else None,
        "rating": store.rating.name,
        "online": dict(rating.state) if rating else None,
        "history": [
            {"block": b, **{k: round(v, 4) for k, v in state.items()}}
            for b, state in store.rating_states(vid)
        ],
        "head_to_head": {k: {"ahead": v[0], "tied": v[1], "behind": v[2]} for k, v in sorted(heads.items())},
        "seat_mean_place": {str(s): round(sum(p) / len(p), 3) for s, p in sorted(seat_places.items())},
        "faults": faults,
        "failed_games": failed,
        "events": [{"at_block": b, "status": k, "why": t} for b, _v, k, t in store.events(vid)],
    }


def list_games(store: LeagueStore, bot: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
    """Stored games, optionally of one version (``NAME`` means every version of it) and kind.

    ``status`` is ``rated``, ``validation`` or ``failed`` (a game some seat failed).
    """
    if status not in (None, "rated", "validation", "failed"):
        raise LeagueError(f"--status must be rated, validation or failed, not {status!r}")
    ids: set[str] | None = None
    if bot is not None:
        ids = {bot} if "@" in bot else {v.id for v in store.versions(entrant=bot)}
        if not ids or not any(v.id in ids for v in store.versions()):
            raise LeagueError(f"no entrant or version {bot!r}")
    out = []
    for key, block, validates, data in store.games(kind=status if status != "failed" else None):
        if ids is not None and not ids & set(data["seats"]):
            continue
        bad = [
            s
            for s in range(len(data["seats"]))
            if data["retired"][s] or data["crashed"][s] or data["never_answered"][s]
        ]
        if status == "failed" and not bad:
            continue
        out.append(
            {
                "key": key,
                "block": block,
                "validates": validates or None,
                "seats": data["seats"],
                "totals": data["totals"],
                "places": data["places"],
                "failed_seats": bad,
            }
        )
    return out


def verify(
    store: LeagueStore, public_key: str | None = None, games: int | None = None, head: str | None = None
) -> tuple[list[str], str]:
    """Checks every stored game: its record replays to its stored outcome, and its signature and
    the chain hold (:mod:`hearts_tournaments.results.signing`; ``public_key``, ``games`` and
    ``head`` as for ``hearts tournament verify``: a head a reader kept must still be in the
    chain); and every line of the published ``heads.jsonl`` is signed and in the chain.

    Returns:
        One line per problem, and the closing line.

    Raises:
        SigningError: ``public_key`` is neither a key nor a published file, or ``games`` and
            ``head`` are not a published point.
    """
    problems: list[str] = []
    stored_games = store.signed_games()
    for key, summary, record in stored_games:
        try:
            stored = json.loads(summary)
        except ValueError as exc:
            problems.append(f"{key}: the stored summary does not read as JSON ({exc})")
            continue
        try:
            replayed = replay(GameRecord.read(record, name="the stored record"))
        except RecordFileError as exc:
            problems.append(f"{key}: {exc}")
            continue
        if replayed["error"] is not None or not replayed["game_over"]:
            problems.append(
                f"{key}: the record does not replay to the end ({replayed['error'] or 'unfinished'})"
            )
        elif list(stored.get("totals", [])) != list(replayed["totals"]):
            problems.append(
                f"{key}: stored totals {stored.get('totals')} but the record gives {replayed['totals']}"
            )
    signer, signed_by, key_problems = signing.expected_signer(store.folder, public_key, games, head)
    problems.extend(key_problems)
    notes: list[str] = []
    if signer is not None:
        rows = store.signatures()
        problems.extend(signing.verify_chain(stored_games, rows, store.ledger_id, signer))
        heads_problems, note = _check_heads(
            store.folder / HEADS, signing.chain_heads(rows, store.ledger_id), store.ledger_id, signer
        )
        problems.extend(heads_problems)
        notes.append(note)
    notes.append(signing.point_checked(signer))
    if problems:
        return problems, f"verify: {len(problems)} problem(s) in {len(stored_games)} stored games"
    return problems, "; ".join(
        (
            f"verify: ok: {len(stored_games)} games replay to their stored outcomes",
            f"every game signed, {signed_by}",
            *notes,
        )
    )


#: Problem lines of ``heads.jsonl`` shown before the rest are counted.
MAX_HEAD_PROBLEMS = 20


def _check_heads(
    path: Path, heads: Sequence[str], league_id: str, expected: signing.Published
) -> tuple[list[str], str]:
    """The problems of the published ``heads.jsonl`` (each line signed by the key, of this
    league, blocks in order, its head the chain's after its count of games), and what the
    closing line says of it."""
    problems: list[str] = []
    lines = 0
    before = -1
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return [], f"no {HEADS} (a league stored before heads were published)"
    except OSError as exc:
        return [f"{HEADS}: cannot be read: {exc.strerror}"], ""
    with handle:
        number = 0
        while line := handle.readline(MAX_HEAD_LINE + 1):
            number += 1
            where = f"{HEADS}: line {number}"
            if len(line) > MAX_HEAD_LINE or not line.endswith(b"\n"):
                problems.append(f"{where}: longer than {MAX_HEAD_LINE} bytes, or cut short")
                if len(line) > MAX_HEAD_LINE:
                    break
                continue
            try:
                league, block, games, head = signing.read_head_line(line, expected.public_key)
            except signing.SigningError as exc:
                problems.append(f"{where}: {exc}")
                continue
            lines += 1
            if league != league_id:
                problems.append(f"{where}: of another league ({league[:32]!r})")
            elif block <= before:
                problems.append(f"{where}: block {block} after block {before}: lines were reordered")
            elif not 0 <= games < len(heads) or heads[games] != head:
                problems.append(
                    f"{where}: block {block}'s head (after {games} games) is not in the chain: the league "
                    "was rolled back past it, or changed"
                )
            before = max(before, block)
    shown = problems[:MAX_HEAD_PROBLEMS]
    if len(problems) > MAX_HEAD_PROBLEMS:
        shown.append(f"{HEADS}: ... and {len(problems) - MAX_HEAD_PROBLEMS} more")
    return shown, f"{HEADS}: {lines} blocks' heads, each signed and in the chain"


def recompute(store: LeagueStore, form: str = "json") -> str:
    """The official table refitted from all stored games in one batch (same games, same bytes)."""
    return show(store, form, online=False)


def audit(store: LeagueStore, alpha: float = ALPHA) -> AuditReport:
    """The fair-play audit of the league's rated games (:mod:`hearts_tournaments.results.audit`),
    by entrant (a version's games count for its entrant); each block is a cluster."""
    entrant_of = {v.id: v.entrant for v in store.versions()}
    stored = []
    for key, block, _validates, data in store.games(kind="rated"):
        record = store.record(key) or ""
        seats = [entrant_of.get(seat, seat) for seat in data["seats"]]
        stored.append((key, f"block {block}", seats, data["places"], record))
    games, skipped = read_games(stored)
    return audit_games(games, alpha, str(store.folder), "entrant", skipped)
