package main

// The bot's three decisions, as pure functions of card codes ("QS", "TH", ...), so that they
// are easy to test without a server.

import (
	"slices"
	"strings"
)

const ranks = "23456789TJQKA"

func rank(card string) int  { return strings.IndexByte(ranks, card[0]) }
func suit(card string) byte { return card[1] }

// danger orders cards for passing: the Black Maria, then the high spades that may catch it,
// then hearts (high first), then everything else by rank.
func danger(card string) int {
	switch {
	case card == "QS":
		return 300
	case card == "AS" || card == "KS":
		return 200 + rank(card)
	case suit(card) == 'H':
		return 100 + rank(card)
	default:
		return rank(card)
	}
}

// choosePass returns the three most dangerous cards of the hand.
func choosePass(hand []string) []string {
	sorted := slices.Clone(hand)
	slices.SortStableFunc(sorted, func(a, b string) int { return danger(b) - danger(a) })
	return sorted[:min(3, len(sorted))]
}

// wins reports whether card would be winning the trick if played after played: the trick
// goes to the highest card of the led suit that was played only once.
func wins(played []string, card string) bool {
	all := append(slices.Clone(played), card)
	led := suit(all[0])
	best := ""
	for _, c := range all {
		if suit(c) == led && countOf(all, c) == 1 && (best == "" || rank(c) > rank(best)) {
			best = c
		}
	}
	return best == card
}

func countOf(cards []string, card string) int {
	n := 0
	for _, c := range cards {
		if c == card {
			n++
		}
	}
	return n
}

// choosePlay picks one of legal (never empty) given the cards already in the current trick.
func choosePlay(legal, trick []string) string {
	byRank := func(a, b string) int { return rank(a) - rank(b) }
	if len(trick) == 0 { // leading: the lowest card
		return slices.MinFunc(legal, byRank)
	}
	led := suit(trick[0])
	following := !slices.ContainsFunc(legal, func(c string) bool { return suit(c) != led })
	if following { // the highest card that does not take the trick, else the lowest
		var safe []string
		for _, c := range legal {
			if !wins(trick, c) {
				safe = append(safe, c)
			}
		}
		if len(safe) > 0 {
			return slices.MaxFunc(safe, byRank)
		}
		return slices.MinFunc(legal, byRank)
	}
	// Void in the led suit: dump the Black Maria, else the highest heart, else the highest card.
	if slices.Contains(legal, "QS") {
		return "QS"
	}
	var hearts []string
	for _, c := range legal {
		if suit(c) == 'H' {
			hearts = append(hearts, c)
		}
	}
	if len(hearts) > 0 {
		return slices.MaxFunc(hearts, byRank)
	}
	return slices.MaxFunc(legal, byRank)
}
