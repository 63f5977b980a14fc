//! Cards as integers `suit * 13 + (rank - 2)` (clubs, diamonds, hearts, spades; 2..A), and
//! 52-bit card masks, exactly as `hearts_core.cards`.

/// All 52 bits set.
pub const FULL_MASK: u64 = (1 << 52) - 1;
/// The 13 bits of each suit.
pub const SUIT_MASKS: [u64; 4] = [0x1FFF, 0x1FFF << 13, 0x1FFF << 26, 0x1FFF << 39];
pub const HEARTS: usize = 2;
pub const SPADES: usize = 3;
pub const HEARTS_MASK: u64 = SUIT_MASKS[HEARTS];
/// The queen of spades.
pub const BLACK_MARIA: u8 = 3 * 13 + 10;
pub const QS_BIT: u64 = 1 << BLACK_MARIA;
/// Hearts and the Black Maria.
pub const POINT_MASK: u64 = HEARTS_MASK | QS_BIT;
pub const NON_POINT: u64 = FULL_MASK & !POINT_MASK;
pub const NON_HEART: u64 = FULL_MASK & !HEARTS_MASK;

const RANKS: &[u8; 13] = b"23456789TJQKA";
const SUITS: &[u8; 4] = b"CDHS";

/// Penalty points of a card: 1 per heart, 13 for the Black Maria.
#[inline]
pub fn points(card: u8) -> i32 {
    ((HEARTS_MASK >> card) & 1) as i32 + 13 * ((QS_BIT >> card) & 1) as i32
}

/// Points of a mask of cards (each once).
#[inline]
pub fn mask_points(mask: u64) -> i32 {
    (mask & HEARTS_MASK).count_ones() as i32 + if mask & QS_BIT != 0 { 13 } else { 0 }
}

/// The card's code, e.g. `QS`.
pub fn code(card: u8) -> String {
    let c = card as usize;
    let mut s = String::with_capacity(2);
    s.push(RANKS[c % 13] as char);
    s.push(SUITS[c / 13] as char);
    s
}

/// Parses a two-character card code.
pub fn parse(code: &str) -> Option<u8> {
    let b = code.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let rank = RANKS.iter().position(|&r| r == b[0])?;
    let suit = SUITS.iter().position(|&s| s == b[1])?;
    Some((suit * 13 + rank) as u8)
}

/// The highest card of a non-empty mask.
#[inline]
pub fn top(mask: u64) -> u8 {
    (63 - mask.leading_zeros()) as u8
}

/// The lowest card of a non-empty mask.
#[inline]
pub fn low(mask: u64) -> u8 {
    mask.trailing_zeros() as u8
}

/// A multiset of cards from two decks as two masks: held at least once, held twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hand {
    pub once: u64,
    pub twice: u64,
}

impl Hand {
    #[inline]
    pub fn len(&self) -> u32 {
        self.once.count_ones() + self.twice.count_ones()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.once == 0
    }

    /// Adds one copy; false if two are already held.
    #[inline]
    pub fn add(&mut self, card: u8) -> bool {
        let bit = 1u64 << card;
        if self.twice & bit != 0 {
            return false;
        }
        if self.once & bit != 0 {
            self.twice |= bit;
        } else {
            self.once |= bit;
        }
        true
    }

    /// Removes one copy; false if none is held.
    #[inline]
    pub fn remove(&mut self, card: u8) -> bool {
        let bit = 1u64 << card;
        if self.twice & bit != 0 {
            self.twice ^= bit;
        } else if self.once & bit != 0 {
            self.once ^= bit;
        } else {
            return false;
        }
        true
    }

    /// Removes one copy of a card known to be held, without branches.
    #[inline]
    pub fn take(&mut self, card: u8) {
        let bit = 1u64 << card;
        let t = self.twice & bit;
        self.twice ^= t;
        self.once ^= bit ^ t;
    }

    /// Adds a copy of a card held at most once, without branches.
    #[inline]
    pub fn put(&mut self, card: u8) {
        let bit = 1u64 << card;
        self.twice |= self.once & bit;
        self.once |= bit;
    }

    #[inline]
    pub fn count(&self, card: u8) -> u8 {
        ((self.once >> card) & 1) as u8 + ((self.twice >> card) & 1) as u8
    }

    /// The multiset of `cards` (each 0..51, at most twice; a third copy is dropped).
    pub fn from_cards(cards: &[u8]) -> Hand {
        let mut hand = Hand::default();
        for &c in cards {
            hand.add(c);
        }
        hand
    }

    /// The cards in card order, a card held twice appearing twice.
    pub fn cards(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() as usize);
        let mut m = self.once;
        while m != 0 {
            let c = low(m);
            out.push(c);
            if self.twice >> c & 1 != 0 {
                out.push(c);
            }
            m &= m - 1;
        }
        out
    }

    pub fn points(&self) -> i32 {
        mask_points(self.once) + mask_points(self.twice)
    }
}

/// The cards of a mask in card order.
pub fn mask_cards(mut mask: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(mask.count_ones() as usize);
    while mask != 0 {
        out.push(low(mask));
        mask &= mask - 1;
    }
    out
}
