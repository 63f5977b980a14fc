// A simple rule-based strategy. It works on card codes ("QS", "TH", ...) so that it can be
// tested without any protocol messages; main.ts feeds it from the decision requests.

export type Card = string;

export const BLACK_MARIA: Card = 'QS';
const RANKS = '23456789TJQKA';
const SUITS = 'CDHS';

/** 0 for a two .. 12 for an ace. */
export const rank = (card: Card): number => RANKS.indexOf(card[0]);
export const suit = (card: Card): string => card[1];

/** Orders cards by rank, then by suit (C, D, H, S). */
const byRank = (a: Card, b: Card): number =>
  rank(a) - rank(b) || SUITS.indexOf(suit(a)) - SUITS.indexOf(suit(b));
const lowest = (cards: readonly Card[]): Card => [...cards].sort(byRank)[0];
const highest = (cards: readonly Card[]): Card => [...cards].sort(byRank).at(-1)!;

/**
 * The index of the card winning the trick so far: the highest card of the suit led that was
 * played only once (identical cards cancel). -1 if there is none.
 */
export function winningIndex(trick: readonly Card[]): number {
  let best = -1;
  trick.forEach((card, i) => {
    const single = trick.indexOf(card) === trick.lastIndexOf(card);
    if (single && suit(card) === suit(trick[0]) && (best < 0 || rank(card) > rank(trick[best]))) {
      best = i;
    }
  });
  return best;
}

const wouldWin = (trick: readonly Card[], card: Card): boolean =>
  winningIndex([...trick, card]) === trick.length;

/** Chooses one of `legal` (never empty) to play to `trick`. */
export function choosePlay(legal: readonly Card[], trick: readonly Card[]): Card {
  if (trick.length === 0) {
    return lowest(legal); // lead low
  }
  const led = suit(trick[0]);
  if (legal.every((card) => suit(card) === led)) {
    // Following suit: the highest card that does not take the trick, else the lowest.
    const ducks = legal.filter((card) => !wouldWin(trick, card));
    return ducks.length > 0 ? highest(ducks) : lowest(legal);
  }
  // Void in the suit led: get rid of points and high cards.
  if (legal.includes(BLACK_MARIA)) {
    return BLACK_MARIA;
  }
  const hearts = legal.filter((card) => suit(card) === 'H');
  return highest(hearts.length > 0 ? hearts : legal);
}

/**
 * How badly we want to get rid of a card: the Black Maria, then AS/KS (they catch it), then
 * hearts from the ten up, then the other cards by rank.
 */
export function danger(card: Card): number {
  if (card === BLACK_MARIA) return 100;
  if (suit(card) === 'S' && rank(card) > rank(BLACK_MARIA)) return 80 + rank(card);
  if (suit(card) === 'H' && rank(card) >= rank('TH')) return 40 + rank(card);
  return rank(card);
}

/** Chooses the three most dangerous cards of `hand` to pass. */
export function choosePass(hand: readonly Card[]): Card[] {
  return [...hand].sort((a, b) => danger(b) - danger(a)).slice(0, 3);
}
