"""``heuristic``: a cancellation-aware rule-based bot.

For every legal card it works out who would be winning the trick after playing it, counting
identical cards that cancel (:func:`hearts_core.state.winning_index`). It ducks with the
highest card that does not take the lead, dumps the Black Maria and high hearts when void,
leads low from long suits, passes its most dangerous cards, and, when one other seat has taken
every point of the hand so far, spoils the moon shot by taking a point card itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hearts_client.bot import MOON_ALERT_POINTS, Bot
from hearts_core.cards import BLACK_MARIA, Card, Rank, Suit
from hearts_core.state import winning_index
from hearts_core.view import View


def pass_danger(card: Card, suit_counts: Counter[Suit]) -> float:
    """How much a card is worth getting rid of when passing (higher passes first)."""
    suit, rank = card.suit, card.rank
    if card == BLACK_MARIA:
        return 100.0
    if suit is Suit.SPADES and rank > Rank.QUEEN:
        # A and K of spades catch the Black Maria unless guarded by enough low spades.
        return 60.0 + (25.0 if suit_counts[Suit.SPADES] < 5 else 0.0) + rank
    if suit is Suit.HEARTS:
        return 20.0 + rank
    # High cards of short suits: passing them helps to void the suit.
    return float(rank) + max(0, 4 - suit_counts[suit]) * 2.0


def moon_threat(view: View) -> int | None:
    """The other seat that has taken every visible point of this hand, if it looks like a shot."""
    holders = [s for s, p in enumerate(view.taken) if p > 0]
    if len(holders) == 1 and holders[0] != view.seat and view.taken[holders[0]] >= MOON_ALERT_POINTS:
        return holders[0]
    return None


class HeuristicBot(Bot):
    """Ducks, dumps points when void, passes danger, and defends against moon shots."""

    name = "heuristic"

    def choose_pass(self, view: View) -> Sequence[Card]:
        cards = list(view.hand)
        counts = Counter(c.suit for c in cards)
        ranked = sorted(cards, key=lambda c: (pass_danger(c, counts), c), reverse=True)
        return ranked[:3]

    def choose_play(self, view: View) -> Card:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        assert view.current is not None
        trick = list(view.current.cards)
        if not trick:
            return self._lead(view, legal)
        threat = moon_threat(view)
        position = len(trick)
        winning_now = winning_index(trick)
        winner_seat = view.current.seat_of(winning_now, view.players) if winning_now is not None else None
        takes = {c: winning_index([*trick, c]) == position for c in legal}
        trick_points = sum(c.points for c in trick) + sum(c.points for c in view.set_aside)
        last = position == view.players - 1
        following = legal[0].suit == trick[0].suit

        if threat is not None and winner_seat == threat and trick_points > 0:
            # Spoil the moon: take this trick's points away from the shooter if we can.
            stealers = [c for c in legal if takes[c]]
            if stealers:
                return max(stealers) if last else min(stealers)

        if following:
            ducks = [c for c in legal if not takes[c]]
            if ducks:
                if BLACK_MARIA in ducks:
                    return BLACK_MARIA
                # The current winner may still be cancelled by its twin from a later seat, which
                # would hand the trick to the next-highest card: duck low in that case.
                if not last and winning_now is not None and self._twin_unseen(view, trick[winning_now]):
                    return min(ducks)
                return max(ducks)
            safe = [c for c in legal if c.points == 0] or list(legal)
            # We take the lead. Last to play: win with the highest safe card. Otherwise play the
            # lowest winning card so a later seat may overtake or cancel it.
            return max(safe) if last else min(safe)
        return self._discard(view, legal, threat, winner_seat)

    def _discard(
        self, view: View, legal: Sequence[Card], threat: int | None, winner_seat: int | None
    ) -> Card:
        if threat is not None and winner_seat == threat:
            safe = [c for c in legal if c.points == 0]
            if safe:
                return max(safe, key=lambda c: c.rank)
        if BLACK_MARIA in legal:
            return BLACK_MARIA
        hearts = [c for c in legal if c.suit is Suit.HEARTS]
        if hearts and (max(hearts).rank >= Rank.TEN or len(hearts) == len(legal)):
            return max(hearts)
        if not self._both_marias_seen(view):
            high_spades = [c for c in legal if c.suit is Suit.SPADES and c.rank > Rank.QUEEN]
            if high_spades:
                return max(high_spades)
        counts = Counter(c.suit for c in view.hand)
        return max(legal, key=lambda c: (c.rank - counts[c.suit], c.points))

    def _lead(self, view: View, legal: Sequence[Card]) -> Card:
        unseen = self._unseen_counts(view)
        holding_maria = BLACK_MARIA in view.hand
        marias_out = not self._both_marias_seen(view) and view.hand.count(BLACK_MARIA) < 2

        def risk(card: Card) -> tuple[float, int]:
            score = float(card.rank)
            if card.points:
                score += 30.0
            if card.suit is Suit.SPADES and card.rank > Rank.QUEEN and marias_out:
                score += 40.0
            if card.suit is Suit.SPADES and card.rank < Rank.QUEEN and marias_out and not holding_maria:
                score -= 3.0  # flush the Black Maria out with low spades
            # Leading a suit with few unseen cards risks everyone else being void.
            score -= min(unseen[card.suit], 8) * 0.5
            return score, card

        return min(legal, key=risk)

    @staticmethod
    def _unseen_counts(view: View) -> Counter[Suit]:
        counts: Counter[Suit] = Counter({s: 26 for s in Suit})
        for _, card in view.played_cards():
            counts[card.suit] -= 1
        for card in view.hand:
            counts[card.suit] -= 1
        return counts

    @staticmethod
    def _both_marias_seen(view: View) -> bool:
        seen = sum(1 for _, c in view.played_cards() if c == BLACK_MARIA)
        return seen >= 2

    @staticmethod
    def _twin_unseen(view: View, card: Card) -> bool:
        seen = sum(1 for _, c in view.played_cards() if c == card) + view.hand.count(card)
        return seen < 2
