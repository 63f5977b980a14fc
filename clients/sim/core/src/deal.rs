//! The referee's seeded deal, byte for byte `hearts_core.deal.deal_hand`.

use crate::cards::Hand;
use crate::game::MAX_PLAYERS;
use crate::pyrandom::PyRandom;
use crate::rng::Rng;
use sha2::{Digest, Sha256};

const DOMAIN: &str = "cancellation-hearts/v1";

/// The two decks in card order, `[0, 0, 1, 1, ..., 51, 51]`: every shuffle starts from it.
const DECKS: [u8; 104] = {
    let mut deck = [0u8; 104];
    let mut i = 0;
    while i < 104 {
        deck[i] = (i / 2) as u8;
        i += 1;
    }
    deck
};

/// The shuffled two-deck order of hand `hand_index` of a game seeded with `seed`.
pub fn shuffled_deck(seed: &str, hand_index: u32) -> [u8; 104] {
    let digest = Sha256::digest(format!("{DOMAIN}/deal:{seed}:{hand_index}").as_bytes());
    let mut rng = PyRandom::from_be_bytes(&digest);
    let mut deck = DECKS;
    rng.shuffle(&mut deck);
    deck
}

/// Deals hand `hand_index`: per seat the hand, and the kitty.
pub fn deal_hand(players: usize, seed: &str, hand_index: u32) -> (Vec<Hand>, Hand) {
    let mut hands = [Hand::default(); MAX_PLAYERS];
    let kitty = split_into(players, &shuffled_deck(seed, hand_index), &mut hands);
    (hands[..players].to_vec(), kitty)
}

/// Deals hand `hand_index` into `hands` (seats `0..players`); returns the kitty.
pub fn deal_hand_into(players: usize, seed: &str, hand_index: u32, hands: &mut [Hand; MAX_PLAYERS]) -> Hand {
    split_into(players, &shuffled_deck(seed, hand_index), hands)
}

fn split_into(players: usize, deck: &[u8; 104], hands: &mut [Hand; MAX_PLAYERS]) -> Hand {
    let size = 104 / players;
    for (hand, cards) in hands.iter_mut().zip(deck.chunks_exact(size)).take(players) {
        *hand = Hand::default();
        for &c in cards {
            hand.put(c);
        }
    }
    let mut kitty = Hand::default();
    for &c in &deck[players * size..] {
        kitty.put(c);
    }
    kitty
}

/// A deal from the simulator's own generator, for loops that need no referee-compatible deal
/// (`DealMode::Fast`): a Fisher-Yates shuffle of the two decks by [`Rng`], seeded by
/// `Rng::new(seed_hash ^ (hand_index + 1) * 0x9E3779B97F4A7C15)`. Much cheaper than the
/// referee's deal (SHA-256 plus CPython's Mersenne Twister seeding).
pub fn fast_deal(players: usize, seed_hash: u64, hand_index: u32) -> (Vec<Hand>, Hand) {
    let mut hands = [Hand::default(); MAX_PLAYERS];
    let kitty = fast_deal_into(players, seed_hash, hand_index, &mut hands);
    (hands[..players].to_vec(), kitty)
}

/// [`fast_deal`] into `hands` (seats `0..players`), without allocating; returns the kitty.
pub fn fast_deal_into(players: usize, seed_hash: u64, hand_index: u32, hands: &mut [Hand; MAX_PLAYERS]) -> Hand {
    let mut rng = Rng::new(seed_hash ^ (u64::from(hand_index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut deck = DECKS;
    // Fisher-Yates from the end, two 32-bit draws from each 64-bit output (high half first).
    let mut i = deck.len() - 1;
    while i > 0 {
        let x = rng.next_u64();
        for half in [x >> 32, x & 0xFFFF_FFFF] {
            if i == 0 {
                break;
            }
            let j = ((half * (i as u64 + 1)) >> 32) as usize;
            deck.swap(i, j);
            i -= 1;
        }
    }
    split_into(players, &deck, hands)
}

/// FNV-1a of a seed's text: the seed of [`fast_deal`].
pub fn seed_hash(seed: &str) -> u64 {
    seed.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// `hearts_core.deal.seed_commitment`.
pub fn seed_commitment(seed: &str) -> String {
    let digest = Sha256::digest(format!("{DOMAIN}/commit:{seed}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
