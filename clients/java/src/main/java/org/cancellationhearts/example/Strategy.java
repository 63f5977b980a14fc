package org.cancellationhearts.example;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * A simple rule-based strategy. It works on card codes ("QS", "TH", ...) so that it can be
 * tested without any protocol messages; {@link Bot} feeds it from the decision requests.
 */
public final class Strategy {
    public static final String BLACK_MARIA = "QS";
    private static final String RANKS = "23456789TJQKA";
    private static final String SUITS = "CDHS";

    private Strategy() {}

    /** 0 for a two .. 12 for an ace. */
    static int rank(String card) {
        return RANKS.indexOf(card.charAt(0));
    }

    static char suit(String card) {
        return card.charAt(1);
    }

    /** Orders cards by rank, then by suit (C, D, H, S). */
    static final Comparator<String> BY_RANK =
            Comparator.comparingInt(Strategy::rank).thenComparingInt(c -> SUITS.indexOf(suit(c)));

    /**
     * The index of the card winning the trick so far: the highest card of the suit led that
     * was played only once (identical cards cancel). -1 if there is none.
     */
    static int winningIndex(List<String> trick) {
        int best = -1;
        for (int i = 0; i < trick.size(); i++) {
            String card = trick.get(i);
            boolean single = Collections.frequency(trick, card) == 1;
            if (single && suit(card) == suit(trick.get(0))
                    && (best < 0 || rank(card) > rank(trick.get(best)))) {
                best = i;
            }
        }
        return best;
    }

    /** Chooses one of {@code legal} (never empty) to play to {@code trick}. */
    public static String play(List<String> legal, List<String> trick) {
        if (trick.isEmpty()) {
            return Collections.min(legal, BY_RANK); // lead low
        }
        char led = suit(trick.get(0));
        if (legal.stream().allMatch(c -> suit(c) == led)) {
            // Following suit: the highest card that does not take the trick, else the lowest.
            List<String> ducks = legal.stream().filter(c -> !wouldWin(trick, c)).toList();
            return ducks.isEmpty() ? Collections.min(legal, BY_RANK) : Collections.max(ducks, BY_RANK);
        }
        // Void in the suit led (or free to choose): get rid of points and high cards.
        if (legal.contains(BLACK_MARIA)) {
            return BLACK_MARIA;
        }
        List<String> hearts = legal.stream().filter(c -> suit(c) == 'H').toList();
        return Collections.max(hearts.isEmpty() ? legal : hearts, BY_RANK);
    }

    static boolean wouldWin(List<String> trick, String card) {
        List<String> after = new ArrayList<>(trick);
        after.add(card);
        return winningIndex(after) == trick.size();
    }

    /** Chooses the three most dangerous cards of {@code hand} to pass. */
    public static List<String> pass(List<String> hand) {
        return hand.stream().sorted(Comparator.comparingInt(Strategy::danger).reversed()).limit(3).toList();
    }

    /**
     * How badly we want to get rid of a card: the Black Maria, then AS/KS (they catch it), then
     * hearts from the ten up, then the other cards by rank.
     */
    static int danger(String card) {
        if (card.equals(BLACK_MARIA)) {
            return 100;
        }
        if (suit(card) == 'S' && rank(card) > rank(BLACK_MARIA)) {
            return 80 + rank(card);
        }
        if (suit(card) == 'H' && rank(card) >= rank("TH")) {
            return 40 + rank(card);
        }
        return rank(card);
    }
}
