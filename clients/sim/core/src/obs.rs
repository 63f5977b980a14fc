//! The information-state observation of one seat: only what that seat may know.
//!
//! Layout (float32, `obs_size(n)` = 320 + 60·n values; "relative seat" r is seat `(me + r) % n`,
//! so r = 0 is the observing seat):
//!
//! | offset | length | content |
//! |---|---|---|
//! | 0 | 52 | own hand: copies held of each card (0, 1, 2) |
//! | 52 | 52 | cards played this hand at least once (1/0), the trick in progress included |
//! | 104 | 52 | cards played this hand twice (1/0) |
//! | 156 | 52·n | trick in progress: for relative seat r, one-hot of the card it played (block r) |
//! | 156+52n | n | points taken from tricks per relative seat / 26 (the kitty left out) |
//! | 156+53n | n | game totals before this hand per relative seat / target score |
//! | 156+54n | 4n | voids shown this hand: relative seat r, suit s (C, D, H, S) at 4r+s |
//! | 156+58n | n | cards held per relative seat / hand size |
//! | 156+59n | 52 | the cards the seat passed this hand (0, 1, 2; those chosen so far while passing) |
//! | 208+59n | 52 | the cards the seat received this hand (0, 1, 2; all 0 until the passes are delivered) |
//! | 260+59n | n | the kitty's taker one-hot per relative seat (all 0 until the first trick is won) |
//! | 260+60n | 2 | pass direction one-hot (left, right) |
//! | 262+60n | 4 | phase one-hot (pass, play, moon, over) |
//! | 266+60n | 54 | the seat's legal actions (all 0 unless it is to act) |

use crate::game::{Game, Phase, NUM_ACTIONS};

/// The observation length for `players` seats.
pub const fn obs_size(players: usize) -> usize {
    320 + 60 * players
}

/// Writes `seat`'s observation into `out` (`out.len() == obs_size(n)`).
pub fn write_observation(game: &Game, seat: usize, out: &mut [f32]) {
    let n = game.players();
    debug_assert_eq!(out.len(), obs_size(n));
    out.fill(0.0);
    let hand = game.hand(seat);
    for c in 0..52u8 {
        out[c as usize] = hand.count(c) as f32;
    }
    let played = game.played();
    let mut m = played.once;
    while m != 0 {
        let c = m.trailing_zeros() as usize;
        out[52 + c] = 1.0;
        if played.twice >> c & 1 != 0 {
            out[104 + c] = 1.0;
        }
        m &= m - 1;
    }
    let rel = |s: usize| (s + n - seat) % n;
    let trick = game.trick_cards();
    let leader = game.leader();
    for (i, &c) in trick.iter().enumerate() {
        let r = rel((leader + i) % n);
        out[156 + 52 * r + c as usize] = 1.0;
    }
    let base = 156 + 52 * n;
    let target = game.rules().target_score as f32;
    let size = game.rules().hand_size() as f32;
    for s in 0..n {
        let r = rel(s);
        out[base + r] = game.public_taken(s) as f32 / 26.0;
        out[base + n + r] = game.totals()[s] as f32 / target;
        let voids = game.voids(s);
        for suit in 0..4 {
            if voids >> suit & 1 != 0 {
                out[base + 2 * n + 4 * r + suit] = 1.0;
            }
        }
        out[base + 6 * n + r] = game.hand(s).len() as f32 / size;
    }
    let base = base + 7 * n;
    for &c in game.passed_cards(seat) {
        out[base + c as usize] += 1.0;
    }
    let received = game.received(seat);
    let mut m = received.once;
    while m != 0 {
        let c = m.trailing_zeros() as usize;
        out[base + 52 + c] = 1.0 + (received.twice >> c & 1) as f32;
        m &= m - 1;
    }
    if let Some(taker) = game.kitty_taker() {
        out[base + 104 + rel(taker)] = 1.0;
    }
    let base = base + 104 + n;
    out[base + usize::from(!game.pass_left())] = 1.0;
    let phase = match game.phase() {
        Phase::Pass => 0,
        Phase::Play => 1,
        Phase::Moon => 2,
        Phase::Over | Phase::Deal => 3,
    };
    out[base + 2 + phase] = 1.0;
    if game.current_player() == Some(seat) {
        let legal = game.legal_mask();
        for a in 0..NUM_ACTIONS {
            if legal >> a & 1 != 0 {
                out[base + 6 + a] = 1.0;
            }
        }
    }
}
