//! Policies that pick an action for the seat to act: uniform random, and the SDK's heuristic.
//!
//! The heuristic plays cards as `HeuristicBot.choose_play` (ported to masks; each seat uses only
//! what it could know; `tests/test_sim_native.py` holds it to the bot decision for decision),
//! passes as `HeuristicBot.choose_pass` (its three most dangerous cards, one per action in that
//! order) and chooses the moon as `hearts_client.bot.moon_choice`.

use crate::cards::{self, Hand, HEARTS_MASK, NON_HEART, NON_POINT, QS_BIT, SPADES, SUIT_MASKS};
use crate::game::{Game, Phase, MOON_OTHERS_PLUS_26, MOON_SELF_MINUS_26};
use crate::rng::Rng;

/// `hearts_client.bot.MOON_ALERT_POINTS`.
pub const MOON_ALERT_POINTS: i32 = 14;
const QS: u8 = cards::BLACK_MARIA;
const HIGH_SPADES: u64 = (1 << (SPADES * 13 + 11)) | (1 << (SPADES * 13 + 12));

#[inline]
fn rank(card: u8) -> i32 {
    (card % 13) as i32 + 2
}

/// Bits strictly above `card`.
#[inline]
fn above(card: u8) -> u64 {
    cards::FULL_MASK & !((2u64 << card) - 1)
}

/// A uniformly random legal action (`rng.pick_bit` over the legal mask), or None when over.
#[inline]
pub fn random_action(game: &Game, rng: &mut Rng) -> Option<u8> {
    let mask = game.legal_mask();
    (mask != 0).then(|| rng.pick_bit(mask))
}

/// The heuristic's action for the seat to act, or None when over.
pub fn heuristic_action(game: &Game) -> Option<u8> {
    match game.phase() {
        Phase::Play => Some(heuristic_play(game)),
        Phase::Pass => Some(heuristic_pass(game)),
        Phase::Moon => {
            let shooter = game.moon_shooter()?;
            // The totals before the hand: the moon hand is not scored yet.
            Some(if moon_choice(shooter, game.totals(), game.rules().target_score) {
                MOON_OTHERS_PLUS_26
            } else {
                MOON_SELF_MINUS_26
            })
        }
        Phase::Over | Phase::Deal => None,
    }
}

/// `hearts_client.bot.moon_choice`: "others +26" (true) only if it ends the game as a win.
pub fn moon_choice(shooter: usize, totals: &[i64], target: i64) -> bool {
    let others: Vec<i64> = totals.iter().enumerate().filter(|&(s, _)| s != shooter).map(|(_, &t)| t + 26).collect();
    let max = others.iter().copied().max().unwrap_or(i64::MIN);
    let min = others.iter().copied().min().unwrap_or(i64::MAX);
    max >= target && totals[shooter] <= min
}

/// `hearts_client.bots.heuristic.pass_danger`.
fn pass_danger(card: u8, suit_counts: &[u32; 4]) -> f64 {
    let suit = (card / 13) as usize;
    let r = rank(card) as f64;
    if card == QS {
        100.0
    } else if suit == SPADES && rank(card) > 12 {
        60.0 + if suit_counts[SPADES] < 5 { 25.0 } else { 0.0 } + r
    } else if suit == cards::HEARTS {
        20.0 + r
    } else {
        r + (4 - suit_counts[suit] as i64).max(0) as f64 * 2.0
    }
}

/// The three cards `HeuristicBot.choose_pass` passes from `hand`, in its order.
pub fn heuristic_pass_cards(hand: Hand) -> [u8; 3] {
    let cards_ = hand.cards();
    let mut counts = [0u32; 4];
    for &c in &cards_ {
        counts[(c / 13) as usize] += 1;
    }
    let mut ranked: Vec<(f64, u8)> = cards_.iter().map(|&c| (pass_danger(c, &counts), c)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    [ranked[0].1, ranked[1].1, ranked[2].1]
}

/// The heuristic's next pass for the seat passing: the first of `HeuristicBot.choose_pass`'s
/// cards for the hand as dealt that the seat has not passed yet (copies counted). After its own
/// passes that is simply the next of its three; after passes chosen otherwise (a random or
/// callable policy) it skips the ones already gone instead of naming a card no longer held.
fn heuristic_pass(game: &Game) -> u8 {
    let seat = game.current_player().unwrap_or(0);
    // The hand as dealt: what is held plus what this seat already chose to pass.
    let mut dealt = game.hand(seat);
    let mut gone = Hand::default();
    for &c in game.passed_cards(seat) {
        dealt.add(c);
        gone.add(c);
    }
    let choice = heuristic_pass_cards(dealt);
    *choice.iter().find(|&&c| !gone.remove(c)).unwrap_or(&choice[2])
}

/// The moon alert of `heuristic.moon_threat`: the one seat holding every visible point, if enough.
fn threat(game: &Game) -> i32 {
    let mut holder = -1i32;
    for seat in 0..game.players() {
        if game.public_taken(seat) > 0 {
            if holder >= 0 {
                return -1;
            }
            holder = seat as i32;
        }
    }
    if holder >= 0 && game.public_taken(holder as usize) >= MOON_ALERT_POINTS {
        holder
    } else {
        -1
    }
}

/// `HeuristicBot.choose_play` for the seat to play.
pub fn heuristic_play(game: &Game) -> u8 {
    let seat = game.current_player().unwrap_or(0);
    let hand = game.hand(seat);
    let trick = game.trick_cards();
    let n = game.players();
    let (mut led, mut seen, mut dup) = (0u8, 0u64, 0u64);
    let mut trick_points = game.public_pending();
    if let Some(&first) = trick.first() {
        led = first / 13;
        for &c in trick {
            trick_points += cards::points(c);
            if c / 13 == led {
                let bit = 1u64 << c;
                if seen & bit != 0 {
                    dup |= bit;
                } else {
                    seen |= bit;
                }
            }
        }
    }
    let played = game.played();
    choose(&Choice {
        seat,
        once: hand.once,
        twice: hand.twice,
        trick,
        led,
        seen,
        dup,
        last: trick.len() == n - 1,
        first: game.trick_index() == 0,
        broken: game.hearts_broken(),
        p_once: played.once,
        p_twice: played.twice,
        threat: threat(game),
        trick_points,
        leader: game.leader(),
        n,
    })
}

struct Choice<'a> {
    seat: usize,
    once: u64,
    twice: u64,
    trick: &'a [u8],
    led: u8,
    seen: u64,
    dup: u64,
    last: bool,
    first: bool,
    broken: bool,
    p_once: u64,
    p_twice: u64,
    threat: i32,
    trick_points: i32,
    leader: usize,
    n: usize,
}

#[inline]
fn lowest(mask: u64) -> u8 {
    cards::low(mask)
}

#[inline]
fn highest(mask: u64) -> u8 {
    cards::top(mask)
}

fn choose(c: &Choice<'_>) -> u8 {
    let once = c.once;
    if c.trick.is_empty() {
        let restricted = if c.first {
            once & NON_POINT
        } else if !c.broken {
            once & NON_HEART
        } else {
            once
        };
        let legal = if restricted != 0 { restricted } else { once };
        if legal & (legal - 1) == 0 {
            return highest(legal);
        }
        return lead(once, c.twice, legal, c.p_once, c.p_twice);
    }
    let single = c.seen & !c.dup;
    let top: i32 = if single != 0 { highest(single) as i32 } else { -1 };
    let shooter_wins = c.threat >= 0
        && c.threat != c.seat as i32
        && top >= 0
        && (c.leader + c.trick.iter().position(|&x| x as i32 == top).unwrap_or(0)) % c.n == c.threat as usize;
    let legal = once & SUIT_MASKS[c.led as usize];
    if legal == 0 {
        return discard(once, c.twice, c.p_twice, shooter_wins);
    }
    if legal & (legal - 1) == 0 {
        return highest(legal);
    }
    let takes = if top >= 0 { legal & !c.seen & above(top as u8) } else { legal & !c.seen };
    if shooter_wins && c.trick_points > 0 && takes != 0 {
        return if c.last { highest(takes) } else { lowest(takes) };
    }
    let ducks = legal & !takes;
    if ducks != 0 {
        if ducks & QS_BIT != 0 {
            return QS;
        }
        if !c.last && top >= 0 && (c.p_twice >> top) & 1 == 0 && (once >> top) & 1 == 0 {
            return lowest(ducks);
        }
        return highest(ducks);
    }
    let safe = if takes & NON_POINT != 0 { takes & NON_POINT } else { takes };
    if c.last {
        highest(safe)
    } else {
        lowest(safe)
    }
}

fn discard(once: u64, twice: u64, p_twice: u64, shooter_wins: bool) -> u8 {
    if shooter_wins {
        let safe = once & NON_POINT;
        if safe != 0 {
            let mut best: i32 = -1;
            for mask in SUIT_MASKS {
                let cs = safe & mask;
                if cs != 0 {
                    let card = highest(cs);
                    if best < 0 || rank(card) > rank(best as u8) {
                        best = card as i32;
                    }
                }
            }
            return best as u8;
        }
    }
    if once & QS_BIT != 0 {
        return QS;
    }
    let hearts = once & HEARTS_MASK;
    if hearts != 0 {
        let top = highest(hearts);
        if rank(top) >= 10 || hearts == once {
            return top;
        }
    }
    if p_twice & QS_BIT == 0 {
        let high = once & HIGH_SPADES;
        if high != 0 {
            return highest(high);
        }
    }
    let mut best: i32 = -1;
    let mut best_key = (0i32, 0i32);
    for mask in SUIT_MASKS {
        let cs = once & mask;
        if cs != 0 {
            let card = highest(cs);
            let key = (rank(card) - cs.count_ones() as i32 - (twice & mask).count_ones() as i32, cards::points(card));
            if best < 0 || key > best_key {
                best = card as i32;
                best_key = key;
            }
        }
    }
    best as u8
}

fn lead(once: u64, twice: u64, legal: u64, p_once: u64, p_twice: u64) -> u8 {
    let held_maria = (once >> QS & 1) + (twice >> QS & 1);
    let marias_out = p_twice >> QS & 1 == 0 && held_maria < 2;
    let mut best: i32 = -1;
    let mut best_score = 0.0f64;
    for (suit, &mask) in SUIT_MASKS.iter().enumerate() {
        let cs = legal & mask;
        if cs == 0 {
            continue;
        }
        let unseen = 26
            - (p_once & mask).count_ones() as i32
            - (p_twice & mask).count_ones() as i32
            - (once & mask).count_ones() as i32
            - (twice & mask).count_ones() as i32;
        let mut card = lowest(cs);
        if card == QS && !marias_out && cs != QS_BIT {
            card = lowest(cs & !QS_BIT);
        }
        let r = rank(card);
        let mut score = r as f64 - unseen.min(8) as f64 * 0.5;
        if cards::points(card) != 0 {
            score += 30.0;
        }
        if suit == SPADES && marias_out {
            if r > 12 {
                score += 40.0;
            } else if r < 12 && held_maria == 0 {
                score -= 3.0;
            }
        }
        if best < 0 || score < best_score {
            best = card as i32;
            best_score = score;
        }
    }
    best as u8
}

/// Named policies for in-core loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    Random,
    Heuristic,
}

impl Named {
    pub fn parse(name: &str) -> Option<Named> {
        match name {
            "random" => Some(Named::Random),
            "heuristic" => Some(Named::Heuristic),
            _ => None,
        }
    }
}

/// Plays `game` with `policy` (random draws from `game.rng`) until it is over, or with
/// `one_hand` until the hand in progress ends. Returns the number of actions taken.
pub fn play_out(game: &mut Game, policy: Named, one_hand: bool) -> u64 {
    if policy == Named::Random {
        return random_steps(game, u64::MAX, one_hand);
    }
    let start = game.hands_done();
    let mut steps = 0;
    while game.phase() != Phase::Over && !(one_hand && game.hands_done() > start) {
        match heuristic_action(game) {
            Some(a) => game.apply_legal(a),
            None => break,
        }
        steps += 1;
    }
    steps
}

/// Random actions (one `pick_bit` draw of `game.rng` each) until `max_steps` are taken, the
/// game is over or, with `one_hand`, the hand in progress has ended. Returns the actions taken.
/// Where the CPU has BMI2 the loop is compiled a second time with it (the same draws and the
/// same actions, the chosen bit found by `pdep`).
pub fn random_steps(game: &mut Game, max_steps: u64, one_hand: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI2 (checked just above).
        return unsafe { random_steps_bmi2(game, max_steps, one_hand) };
    }
    random_loop::<false>(game, max_steps, one_hand)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn random_steps_bmi2(game: &mut Game, max_steps: u64, one_hand: bool) -> u64 {
    random_loop::<true>(game, max_steps, one_hand)
}

#[inline(always)]
fn random_loop<const PDEP: bool>(game: &mut Game, max_steps: u64, one_hand: bool) -> u64 {
    let start = game.hands_done();
    let mut rng = game.rng;
    let mut steps = 0;
    while steps < max_steps && game.phase() != Phase::Over && !(one_hand && game.hands_done() > start) {
        let mask = game.legal_mask();
        if mask == 0 {
            break;
        }
        game.apply_legal(rng.pick_bit_with::<PDEP>(mask));
        steps += 1;
    }
    game.rng = rng;
    steps
}
