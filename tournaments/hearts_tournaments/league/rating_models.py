"""The league's online rating models: a named extension point (docs/DEVELOPING.md).

A league rates its versions online, block by block, with one :class:`RatingModel` chosen at
``hearts league init --rating NAME`` (``rating`` in its settings, fixed once a block is stored).
A model is registered by name in :data:`RATING_MODELS` and says:

* what it is (:attr:`~RatingModel.name`, :attr:`~RatingModel.description`),
* the state of a version that has not played (:attr:`~RatingModel.defaults`: its parameters,
  a dict of floats, stored per version as JSON with the model's name),
* how a block's games, in rotation order, move the states (:meth:`~RatingModel.update`, a pure
  deterministic function),
* what matchmaking reads of a state (:meth:`~RatingModel.estimate`, a point estimate, and
  :meth:`~RatingModel.uncertainty`, compared with ``settled_sigma``; :attr:`~RatingModel.scale`,
  the unit of the rating term),
* the columns it shows (:attr:`~RatingModel.columns`) in ``hearts league show`` and on the
  league's page; the JSON report carries its parameters.

The official table does not depend on the model: it is the batch Plackett-Luce fit over every
stored block (:func:`~hearts_tournaments.league.ratings.official_table`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from hearts_tournaments.arena.outcome import GameOutcome

#: The model of a league whose settings name none (every league from before models).
DEFAULT_RATING = "openskill-pl"

#: A version's online rating state: the model's parameters by name.
State = dict[str, float]


@dataclass(frozen=True, slots=True)
class Column:
    """A column a rating model shows per version.

    Attributes:
        name: Its heading in ``hearts league show`` (table, CSV, Markdown).
        label: Its heading on the league's web page.
        format: A :meth:`str.format` template over the state's parameters (``{mu:.1f}``).
    """

    name: str
    label: str
    format: str

    def text(self, state: Mapping[str, float] | None) -> str:
        """The cell of a version with ``state`` (``-`` without one)."""
        return "-" if state is None else self.format.format(**state)


class RatingModel(ABC):
    """An online rating model of the league (see the module's docstring)."""

    #: Its name in a league's settings (``rating``) and in the database.
    name: ClassVar[str]
    #: One line on what it is (``hearts league init --help``, docs/LEAGUE.md).
    description: ClassVar[str]
    #: The state of a version that has not played yet.
    defaults: ClassVar[Mapping[str, float]]
    #: What it shows per version in tables.
    columns: ClassVar[tuple[Column, ...]]
    #: The unit matchmaking measures distances between estimates in.
    scale: ClassVar[float]

    @abstractmethod
    def update(
        self, outcomes: Sequence[GameOutcome], start: Mapping[str, Mapping[str, float]]
    ) -> dict[str, State]:
        """The states of a block's versions after its games.

        Args:
            outcomes: The block's games in rotation order.
            start: States before the block (a version missing starts at :attr:`defaults`).

        Returns:
            The state of every version seated in the block (only those).
        """

    @abstractmethod
    def estimate(self, state: Mapping[str, float]) -> float:
        """The point estimate matchmaking seats similar versions by."""

    @abstractmethod
    def uncertainty(self, state: Mapping[str, float]) -> float:
        """How unsure the estimate is: a version above ``settled_sigma`` gets extra games."""

    def state(self, data: Mapping[str, Any]) -> State:
        """A stored state read back: exactly the model's parameters, as floats.

        Raises:
            ValueError: a parameter is missing or not a finite number.
        """
        out: State = {}
        for key in self.defaults:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"rating state {dict(data)!r} lacks a finite {key!r} for {self.name}")
            out[key] = float(value)
        return out


class OpenSkillModel(RatingModel):
    """One of OpenSkill's models, each game of a block one ``rate`` call in rotation order.

    A version seated more than once at a table (fewer versions than seats) gets the mean of its
    seats' updated ratings.
    """

    defaults: ClassVar[Mapping[str, float]] = {"mu": 25.0, "sigma": 25 / 3}
    scale: ClassVar[float] = 25 / 3
    #: The OpenSkill model class.
    model: ClassVar[type[PlackettLuce] | type[ThurstoneMostellerFull] | type[BradleyTerryFull]]

    def update(
        self, outcomes: Sequence[GameOutcome], start: Mapping[str, Mapping[str, float]]
    ) -> dict[str, State]:
        model: Any = self.model()  # one of three classes, each typed against its own ratings only
        default = model.rating()
        ratings = {
            v: (float(start[v]["mu"]), float(start[v]["sigma"]))
            if v in start
            else (float(default.mu), float(default.sigma))
            for o in outcomes
            for v in o.seats
        }
        for outcome in outcomes:
            teams = [[model.rating(mu=ratings[v][0], sigma=ratings[v][1])] for v in outcome.seats]
            updated = model.rate(teams, ranks=list(outcome.places))
            seats_of: dict[str, list[int]] = {}
            for seat, v in enumerate(outcome.seats):
                seats_of.setdefault(v, []).append(seat)
            for v, seats in seats_of.items():
                ratings[v] = (
                    sum(float(updated[s][0].mu) for s in seats) / len(seats),
                    sum(float(updated[s][0].sigma) for s in seats) / len(seats),
                )
        return {v: {"mu": mu, "sigma": sigma} for v, (mu, sigma) in ratings.items()}

    def estimate(self, state: Mapping[str, float]) -> float:
        return float(state["mu"])

    def uncertainty(self, state: Mapping[str, float]) -> float:
        return float(state["sigma"])


class OpenSkillPlackettLuce(OpenSkillModel):
    """OpenSkill's Plackett-Luce model: the league's rating since its beginning."""

    name = "openskill-pl"
    description = "OpenSkill Plackett-Luce (mu, sigma), each game of a block in rotation order"
    columns = (Column("online", "Online μ ± σ", "{mu:.1f}±{sigma:.1f}"),)
    model = PlackettLuce


class OpenSkillThurstoneMosteller(OpenSkillModel):
    """OpenSkill's Thurstone-Mosteller model over every pair of a table."""

    name = "openskill-tm"
    description = "OpenSkill Thurstone-Mosteller, full pairing (mu, sigma), each game in rotation order"
    columns = (Column("online-tm", "Online μ ± σ (Thurstone-Mosteller)", "{mu:.2f}±{sigma:.2f}"),)
    model = ThurstoneMostellerFull


class OpenSkillBradleyTerry(OpenSkillModel):
    """OpenSkill's Bradley-Terry model over every pair of a table."""

    name = "openskill-bt"
    description = "OpenSkill Bradley-Terry, full pairing (mu, sigma), each game in rotation order"
    columns = (Column("online-bt", "Online μ ± σ (Bradley-Terry)", "{mu:.2f}±{sigma:.2f}"),)
    model = BradleyTerryFull


#: The rating models a league may use, by name (``hearts league init --rating NAME``).
RATING_MODELS: dict[str, RatingModel] = {
    model.name: model
    for model in (OpenSkillPlackettLuce(), OpenSkillThurstoneMosteller(), OpenSkillBradleyTerry())
}


def rating_refusal(name: object) -> str | None:
    """Why ``name`` is no rating model (one line naming the setting and the known names), or None."""
    if isinstance(name, str) and name in RATING_MODELS:
        return None
    return f"rating must be one of {', '.join(RATING_MODELS)}, not {name!r}"


def rating_model(name: str) -> RatingModel:
    """The registered model ``name``.

    Raises:
        KeyError: with :func:`rating_refusal`'s line, when there is none.
    """
    try:
        return RATING_MODELS[name]
    except KeyError:
        raise KeyError(rating_refusal(name)) from None
