//! The referee's seeded deal, byte for byte `hearts_core.deal.deal_hand`.

use crate::cards::Hand;
use crate::pyrandom::PyRandom;
use sha2::{Digest, Sha256};

const DOMAIN: &str = "cancellation-hearts/v1";

/// The shuffled two-deck order of hand `hand_index` of a game seeded with `seed`.
pub fn shuffled_deck(seed: &str, hand_index: u32) -> [u8; 104] {
    let digest = Sha256::digest(format!("{DOMAIN}/deal:{seed}:{hand_index}").as_bytes());
    let mut rng = PyRandom::from_be_bytes(&digest);
    let mut deck = [0u8; 104];
    for (i, c) in deck.iter_mut().enumerate() {
        *c = (i / 2) as u8;
    }
    rng.shuffle(&mut deck);
    deck
}

/// Deals hand `hand_index`: per seat the hand, and the kitty.
pub fn deal_hand(players: usize, seed: &str, hand_index: u32) -> (Vec<Hand>, Hand) {
    let deck = shuffled_deck(seed, hand_index);
    let size = 104 / players;
    let mut hands = vec![Hand::default(); players];
    for (seat, hand) in hands.iter_mut().enumerate() {
        for &c in &deck[seat * size..(seat + 1) * size] {
            hand.add(c);
        }
    }
    let mut kitty = Hand::default();
    for &c in &deck[players * size..] {
        kitty.add(c);
    }
    (hands, kitty)
}

/// `hearts_core.deal.seed_commitment`.
pub fn seed_commitment(seed: &str) -> String {
    let digest = Sha256::digest(format!("{DOMAIN}/commit:{seed}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
