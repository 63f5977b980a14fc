package org.cancellationhearts.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class StrategyTest {
    @Test
    void leadsTheLowestCard() {
        assertEquals("3D", Strategy.play(List.of("5C", "3D", "TS"), List.of()));
    }

    @Test
    void followsWithTheHighestCardThatDoesNotWin() {
        assertEquals("JC", Strategy.play(List.of("2C", "JC", "AC"), List.of("QC", "4C")));
    }

    @Test
    void aCardThatCancelsTheWinnerDoesNotWin() {
        // Our KC cancels the other KC, so 9C wins: KC is the highest card that does not win.
        assertEquals("KC", Strategy.play(List.of("2C", "KC", "AC"), List.of("9C", "KC")));
    }

    @Test
    void playsTheLowestWhenEveryCardWins() {
        assertEquals("9H", Strategy.play(List.of("9H", "KH"), List.of("2H", "5H")));
    }

    @Test
    void cancelledCardsDoNotCountAsWinners() {
        // Both aces cancel; 3S is winning, so only 2S ducks under it.
        assertEquals("2S", Strategy.play(List.of("2S", "4S"), List.of("AS", "AS", "3S")));
    }

    @Test
    void dumpsTheBlackMariaWhenVoid() {
        assertEquals("QS", Strategy.play(List.of("2C", "AH", "QS"), List.of("5D")));
    }

    @Test
    void dumpsTheHighestHeartThenTheHighestCardWhenVoid() {
        assertEquals("JH", Strategy.play(List.of("2C", "JH", "3H", "AC"), List.of("5D")));
        assertEquals("AC", Strategy.play(List.of("2C", "AC", "KS"), List.of("5D")));
    }

    @Test
    void passesTheMostDangerousCards() {
        assertEquals(List.of("QS", "QS", "AS"), Strategy.pass(List.of("AC", "KH", "AS", "QS", "QS", "2S")));
        assertEquals(List.of("KS", "AH", "TH"), Strategy.pass(List.of("AC", "2H", "TH", "AH", "KS", "3D")));
        assertEquals(List.of("AC", "KD", "9H"), Strategy.pass(List.of("AC", "KD", "9H", "2S", "3H")));
    }
}
