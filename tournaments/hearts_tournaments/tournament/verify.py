"""``hearts tournament verify DIR``: check that a tournament's results are the games' own.

The database is where a forger would write (a bot that could reach it once ranked itself first
with a single changed row), so nothing in it is taken on trust. For every stored game:

* its record's seed is the tournament's seed of that deal (keyed by the deal secret), the seed
  matches the commitment published before the game, and every hand was dealt from it;
* the record replays without error to the end, and the replay gives the stored outcome: totals,
  places, winners, hands played; the record's fault list gives the stored faults, retirements
  and never-answered seats, and the record's bots are the schedule's seats;
* the record file the referee wrote (``records/<game_id>.json``) is the same record; and no
  record file holds a game of the tournament that the database lacks (a deleted row).

Then the standings are recomputed from the records alone and compared with what ``hearts
tournament report`` shows (the stored games' standings, and the folder's standings snapshot
when it is of these games: a cache is never trusted), and the stored schedule with the one the
stored configuration gives.

All of that a writer of the folder could recompute (the deal secret is in the database). What it
cannot is the signatures (:mod:`hearts_tournaments.results.signing`): every game's signature and the
chain are checked against the key given with ``--public-key`` (as printed with the standings, or
the published ``published.json``), else against the organiser's own key when it is on this
machine, else against the key the folder's ``published.json`` names, which is said. A forged,
dropped, reordered or re-signed game is reported by its key.

Each problem is one line; none means the published standings are the games' own.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_core.record import GameRecord, RecordFileError
from hearts_core.record import places_of as places
from hearts_core.replay import replay, verify_seed
from hearts_tournaments.arena.job import ScheduledGame, deal_seed
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results import signing
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME, Tournament, schedule_for
from hearts_tournaments.tournament.luck_correction import LuckCorrection
from hearts_tournaments.tournament.results import Standings, compute_standings
from hearts_tournaments.tournament.runner import tournament_standings
from hearts_tournaments.tournament.standings_snapshot import fingerprint, load_snapshot

#: Problems printed per differing standings line before the rest are summarised.
MAX_STANDING_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class Verification:
    """What ``verify`` found.

    Attributes:
        games: Stored games checked.
        record_files: Record files compared with their database copies.
        problems: One line per problem; empty when everything agrees.
    """

    games: int
    record_files: int
    problems: tuple[str, ...]
    signed_by: str = ""
    #: What the closing line adds: whether the tournament is complete, and whether the count and
    #: head were checked against a point kept outside the folder.
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def summary(self) -> str:
        """The closing line."""
        if self.problems:
            return f"verify: {len(self.problems)} problem(s) in {self.games} stored games"
        files = f", {self.record_files} record files" if self.record_files else ""
        return "; ".join(
            (
                f"verify: ok: {self.games} games{files}: seeds, deals, records, outcomes and standings agree",
                f"every game signed, {self.signed_by}",
                *self.notes,
            )
        )


def verify_tournament(
    tournament: Tournament, public_key: str | None = None, games: int | None = None, head: str | None = None
) -> Verification:
    """Checks every stored game of ``tournament``, its signatures and its standings (see the module's doc).

    Args:
        tournament: The tournament.
        public_key: The key the games must be signed by: as printed (``ed25519:…``), or the path
            of a published ``published.json`` (then its count and chain head are checked too).
        games: The count of games published with the standings (with ``head``).
        head: The chain's head after ``games`` games, as published (alone: anywhere in the chain).

    Raises:
        SigningError: ``public_key`` is neither, or ``games`` and ``head`` are not a published point.
    """
    store = tournament.store
    config = tournament.config
    schedule = store.schedule()
    by_key = {g.key: g for g in schedule.games}
    secret = store.deal_secret()
    records_dir = tournament.output / "records"
    check_files = not config.server  # an external referee keeps its record files elsewhere
    problems: list[str] = []
    files = 0

    expected = schedule_for(config)  # as the runner made it: seating, gauntlet and all
    if expected.to_json() != schedule.to_json():
        problems.append("schedule: the stored schedule is not the one the stored configuration gives")
    stored_balance = store.balance()
    recounted = schedule.balance().to_json()
    # A report stored by an older version lacks the newer keys: it is checked on those it has.
    if stored_balance != {key: recounted[key] for key in stored_balance if key in recounted}:
        problems.append("schedule: the stored balance report is not the schedule's")

    stored = store.outcomes(records=True)
    rebuilt: list[GameOutcome] = []
    seen: Counter[str] = Counter(o.key for o in stored)
    for key, count in seen.items():
        if count > 1:
            problems.append(f"{key}: stored {count} times")
    for outcome in stored:
        game = by_key.get(outcome.key)
        if game is None:
            problems.append(f"{outcome.key}: not a game of the schedule")
            continue
        try:
            record = GameRecord.read(outcome.record_json, name="the stored record")
        except RecordFileError as exc:
            problems.append(f"{outcome.key}: {exc}")
            continue
        game_problems, from_record = _check_game(outcome, record, game, deal_seed(secret, game))
        problems.extend(f"{outcome.key}: {p}" for p in game_problems)
        if from_record is not None:
            rebuilt.append(from_record)
        if check_files:
            files += 1
            problems.extend(f"{outcome.key}: {p}" for p in _check_file(records_dir, outcome.game_id, record))

    if check_files:
        problems.extend(_unstored_games(records_dir, config.name, {o.game_id for o in stored}, set(seen)))

    reported = tournament_standings(tournament)
    recomputed = compute_standings(
        name=config.name,
        schedule=schedule,
        outcomes=rebuilt,
        target_score=config.target_score,
        quarantine_after=config.quarantine_after,
        balance=schedule.balance().to_json(),
        gauntlet=config.gauntlet,
        luck=LuckCorrection.of(config.bots) if config.luck_correction else None,
    )
    problems.extend(_compare_standings(reported, recomputed))
    # The snapshot `report` and the web read is a cache: it must be what the report computes
    # from the stored games now (which was compared with the records just above).
    kept = load_snapshot(tournament.output)
    if kept is not None and kept.fingerprint == fingerprint(store):
        problems.extend(
            f"{SNAPSHOT_NAME}: {p}" for p in _compare_standings(kept.standings, reported, "snapshot")
        )
    signer, signed_by, key_problems = signing.expected_signer(tournament.output, public_key, games, head)
    problems.extend(key_problems)
    claim: Mapping[str, Any] = {}
    source = ""
    if signer is not None:
        problems.extend(
            signing.verify_chain(store.signed_games(), store.signatures(), store.ledger_id, signer)
        )
        claim, source = signer.body, signer.source
    scheduled, digest = store.schedule_digest()
    if "format" in claim and (claim.get("schedule_sha256"), claim.get("scheduled")) != (digest, scheduled):
        problems.append(
            f"published: {source} was signed over another schedule than the stored one: the schedule "
            "(or the configuration it comes from) was changed"
        )
    notes = (_completeness(claim, source, len(stored), scheduled), signing.point_checked(signer))
    return Verification(
        games=len(stored), record_files=files, problems=tuple(problems), signed_by=signed_by, notes=notes
    )


def _completeness(claim: Mapping[str, Any], source: str, stored: int, scheduled: int) -> str:
    """Whether the tournament is complete: the games stored against the schedule, and what the
    signed ``published.json`` (from ``source``) said when it was signed: one signed before the
    last games says they were not played yet."""
    here = f"{stored} of {scheduled} scheduled games are stored"
    if not claim:
        return f"{here}; no signed {signing.PUBLISHED} says whether the tournament was complete"
    if "format" not in claim:
        return f"{here}; {source} was written by an older version and does not say whether it was complete"
    if claim.get("complete") is True and stored == scheduled:
        return f"complete: all {scheduled} scheduled games are stored, as {source} says"
    return (
        f"incomplete: {here}; {source} says {claim.get('played')} of {claim.get('scheduled')} were "
        "played when it was signed"
    )


def _check_game(
    outcome: GameOutcome, record: GameRecord, game: ScheduledGame, seed: str
) -> tuple[list[str], GameOutcome | None]:
    """The problems of one stored game, and its outcome as its record alone gives it."""
    problems: list[str] = []
    if outcome.seats != game.seats:
        problems.append(f"the stored seats {list(outcome.seats)} are not the schedule's {list(game.seats)}")
    if record.bots != game.seats:
        shown = None if record.bots is None else list(record.bots)
        problems.append(f"the record's bots {shown} are not the schedule's {list(game.seats)}")
    if record.game_id != outcome.game_id:
        problems.append(f"the record is of game {record.game_id!r}, not {outcome.game_id!r}")
    if record.seed != seed:
        problems.append(f"the record's seed is not the tournament's seed of deal {game.deal}")
    problems.extend(verify_seed(record))
    replayed = replay(record)
    if replayed["error"] is not None:
        problems.append(f"the record does not replay: {replayed['error']}")
        return problems, None
    if not replayed["game_over"]:
        problems.append("the record stops before the game is over")
        return problems, None
    players = len(game.seats)
    totals = tuple(replayed["totals"])
    finish = tuple(places(totals))
    winners = tuple(replayed["winners"])
    hands = len(record.hands)
    faults, retired = _faults_of(record, players)
    never = _never_answered(record, players)
    errors = _bot_errors_of(record, players)
    given: dict[str, tuple[object, object]] = {
        "totals": (outcome.totals, totals),
        "places": (outcome.places, finish),
        "winners": (outcome.winners, winners),
        "hands": (outcome.hands, hands),
        "faults": (outcome.faults, faults),
        "retired": (outcome.retired, retired),
        "never_answered": (outcome.never_answered, never),
        "bot_errors": (outcome.bot_errors, errors),
    }
    for name, (stored, actual) in given.items():
        if stored != actual:
            problems.append(f"stored {name} {_shown(stored)} but the record gives {_shown(actual)}")
    result = record.result
    if result is not None:
        for name, actual in (("totals", totals), ("places", finish), ("winners", winners)):
            if getattr(result, name) != actual:
                problems.append(f"the record's result {name} are not what its moves give")
    rebuilt = GameOutcome(
        key=outcome.key,
        game_id=outcome.game_id,
        seats=game.seats,
        totals=totals,
        places=finish,
        winners=winners,
        hands=hands,
        faults=faults,
        retired=retired,
        # Not in the record: what the runner saw of the processes.
        absent=outcome.absent,
        crashed=outcome.crashed,
        never_answered=never,
        record_json=outcome.record_json,
        bot_errors=errors,
    )
    return problems, rebuilt


def _faults_of(record: GameRecord, players: int) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Faults per seat and retired seats, from the record's fault list."""
    counts = [0] * players
    retired = [False] * players
    for fault in record.faults or ():
        if 0 <= fault.seat < players:
            counts[fault.seat] += 1
            retired[fault.seat] = retired[fault.seat] or fault.retired
    return tuple(counts), tuple(retired)


def _never_answered(record: GameRecord, players: int) -> tuple[bool, ...]:
    """Per seat, whether it never made a decision of its own (the referee or its SDK made each)."""
    answered = {d.seat for d in record.decisions or () if not d.by_referee and not d.bot_error}
    return tuple(seat not in answered for seat in range(players))


def _bot_errors_of(record: GameRecord, players: int) -> tuple[int, ...]:
    """Per seat, the answers its SDK made for the bot (decisions marked ``bot_error``)."""
    counts = [0] * players
    for d in record.decisions or ():
        if 0 <= d.seat < players and d.bot_error:
            counts[d.seat] += 1
    return tuple(counts)


def _check_file(folder: Path, game_id: str, record: GameRecord) -> Iterator[str]:
    path = folder / f"{game_id}.json"
    if not path.exists() and not path.is_symlink():
        yield f"the record file {path} is missing"
        return
    try:
        on_disk = GameRecord.read(path, name=f"the record file {path}")
    except RecordFileError as exc:
        yield str(exc)
        return
    if on_disk != record:
        yield f"the record file {path} differs from the database's copy"


def _unstored_games(folder: Path, name: str, game_ids: set[str], keys: set[str]) -> Iterator[str]:
    """Record files of this tournament's games whose game is not stored at all.

    A game whose row was deleted would be played again on resume: a second chance for a bot
    that did badly. (A game played again after a kill has its first record file too, but its
    key is stored, under its new game id.)
    """
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path.stem in game_ids:
            continue
        try:
            label = GameRecord.read(path, lenient=True).record.label or ""
        except RecordFileError:
            continue
        if label.startswith(f"{name}/") and label[len(name) + 1 :] not in keys:
            yield f"{label[len(name) + 1 :]}: the record file {path} holds a finished game the database lacks"


def _compare_standings(reported: Standings, recomputed: Standings, what: str = "report") -> Iterator[str]:
    """One line per field of a bot's line that differs between the report and the records
    (and, for a snapshot, one per other section that differs)."""
    if what != "report":
        theirs, truth_json = reported.to_json(), recomputed.to_json()
        for section, value in theirs.items():
            if section != "standings" and truth_json.get(section) != value:
                yield f"{section} differs from the records' in the {what}"
    mine = {s["bot"]: s for s in recomputed.to_json()["standings"]}
    shown = 0
    for line in reported.to_json()["standings"]:
        truth = mine.get(line["bot"])
        if truth is None:
            continue
        for field, value in line.items():
            if truth.get(field) != value:
                shown += 1
                if shown <= MAX_STANDING_PROBLEMS:
                    yield (
                        f"standings: {line['bot']}: {field} is {_shown(value)} in the {what} but "
                        f"{_shown(truth.get(field))} from the records"
                    )
    if shown > MAX_STANDING_PROBLEMS:
        yield f"standings: ... and {shown - MAX_STANDING_PROBLEMS} more differences"


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value)
