//! World sampling, a port of `hearts_client.sampler.WorldSampler` that draws the same worlds
//! from the same CPython `random.Random` stream (shuffle, `_randbelow`, stable sorts, the
//! breadth-first augmenting path and its list order, all as the Python code does them).

use std::collections::VecDeque;

use crate::cards::{Hand, FULL_MASK, HEARTS_MASK, POINT_MASK, SUIT_MASKS};
use crate::pyrandom::PyRandom;

/// One trick of the view: its leader, its cards in order, and whether it is complete.
pub struct TrickSeen {
    pub leader: usize,
    pub cards: Vec<u8>,
    pub complete: bool,
}

/// What the sampler reads from a View.
pub struct ViewFacts {
    pub players: usize,
    pub seat: usize,
    pub passing: bool,
    pub hand: Hand,
    pub passed: Vec<u8>,
    pub pass_left: bool,
    pub hand_sizes: Vec<usize>,
    pub kitty_size: usize,
    /// The completed tricks, then the trick in progress (if any).
    pub tricks: Vec<TrickSeen>,
}

/// The constraints of one view, worked out once (`WorldSampler.__init__`).
pub struct WorldSampler {
    players: usize,
    known: Vec<Hand>,
    capacity: Vec<usize>,
    eligible: Vec<Vec<usize>>,
    constrained: Vec<u8>,
    free: Vec<u8>,
}

fn allowed_masks(facts: &ViewFacts) -> Vec<u64> {
    let n = facts.players;
    let mut allowed = vec![FULL_MASK; n];
    let mut broken = false;
    for (index, trick) in facts.tricks.iter().enumerate() {
        let Some(&lead) = trick.cards.first() else { continue };
        if index == 0 && POINT_MASK >> lead & 1 != 0 {
            allowed[trick.leader] &= POINT_MASK;
        } else if !broken && HEARTS_MASK >> lead & 1 != 0 {
            allowed[trick.leader] &= HEARTS_MASK;
        }
        let suit = SUIT_MASKS[(lead / 13) as usize];
        for (position, &card) in trick.cards.iter().enumerate() {
            if suit >> card & 1 == 0 {
                allowed[(trick.leader + position) % n] &= !suit;
            }
        }
        if trick.complete && trick.cards.iter().any(|&c| POINT_MASK >> c & 1 != 0) {
            broken = true;
        }
    }
    allowed
}

impl WorldSampler {
    /// Errors: the view is inconsistent (the messages of the Python sampler).
    pub fn new(facts: &ViewFacts) -> Result<WorldSampler, String> {
        let n = facts.players;
        let me = facts.seat;
        let mut remaining = [2i32; 52];
        for c in facts.hand.cards() {
            remaining[c as usize] -= 1;
        }
        let mut played_by = vec![[0u8; 52]; n];
        for trick in &facts.tricks {
            for (i, &c) in trick.cards.iter().enumerate() {
                remaining[c as usize] -= 1;
                played_by[(trick.leader + i) % n][c as usize] += 1;
            }
        }
        let mut known = vec![Hand::default(); n];
        known[me] = facts.hand;
        if !facts.passing && !facts.passed.is_empty() {
            let receiver = if facts.pass_left { (me + 1) % n } else { (me + n - 1) % n };
            let mut passed = [0u8; 52];
            for &c in &facts.passed {
                passed[c as usize] += 1;
            }
            let mut still = Hand::default();
            for c in 0..52u8 {
                for _ in 0..passed[c as usize].saturating_sub(played_by[receiver][c as usize]) {
                    still.add(c);
                    remaining[c as usize] -= 1;
                }
            }
            known[receiver] = still;
        }
        if remaining.iter().any(|&r| r < 0) {
            return Err("the view shows a card more than twice".into());
        }
        let mut allowed = allowed_masks(facts);
        allowed.push(FULL_MASK);
        let mut capacity: Vec<i64> = (0..n).map(|s| facts.hand_sizes[s] as i64 - i64::from(known[s].len())).collect();
        capacity[me] = 0;
        capacity.push(facts.kitty_size as i64);
        let pool: Vec<u8> = (0..52u8).flat_map(|c| std::iter::repeat_n(c, remaining[c as usize] as usize)).collect();
        if capacity.iter().sum::<i64>() != pool.len() as i64 || capacity.iter().any(|&c| c < 0) {
            return Err(format!(
                "{} unseen cards do not fit hand sizes {:?} and a kitty of {}",
                pool.len(),
                facts.hand_sizes,
                facts.kitty_size
            ));
        }
        let open: Vec<usize> = (0..=n).filter(|&b| capacity[b] > 0).collect();
        let mut eligible = vec![Vec::new(); 52];
        for c in 0..52u8 {
            eligible[c as usize] = open.iter().copied().filter(|&b| allowed[b] >> c & 1 != 0).collect();
        }
        let constrained: Vec<u8> = pool.iter().copied().filter(|&c| eligible[c as usize].len() < open.len()).collect();
        let free: Vec<u8> = pool.iter().copied().filter(|&c| eligible[c as usize].len() == open.len()).collect();
        if let Some(&c) = constrained.iter().find(|&&c| eligible[c as usize].is_empty()) {
            return Err(format!("no seat may hold {}", crate::cards::code(c)));
        }
        Ok(WorldSampler {
            players: n,
            known,
            capacity: capacity.into_iter().map(|c| c as usize).collect(),
            eligible,
            constrained,
            free,
        })
    }

    /// Draws one world: per seat the hand, and the kitty (`WorldSampler.sample`).
    pub fn sample(&self, rng: &mut PyRandom) -> Result<(Vec<Hand>, Hand), String> {
        let n = self.players;
        let mut left = self.capacity.clone();
        let mut dealt: Vec<Vec<u8>> = vec![Vec::new(); n + 1];
        let mut cards = self.constrained.clone();
        rng.shuffle(&mut cards);
        cards.sort_by_key(|&c| self.eligible[c as usize].len());
        for card in cards {
            let bins: Vec<usize> = self.eligible[card as usize].iter().copied().filter(|&b| left[b] > 0).collect();
            let target = if bins.is_empty() {
                self.make_room(card, &mut dealt, &mut left)?
            } else {
                let total: usize = bins.iter().map(|&b| left[b]).sum();
                let mut pick = rng.randbelow(total as u32) as i64;
                let mut chosen = bins[bins.len() - 1];
                for &b in &bins {
                    pick -= left[b] as i64;
                    if pick < 0 {
                        chosen = b;
                        break;
                    }
                }
                chosen
            };
            dealt[target].push(card);
            left[target] -= 1;
        }
        let mut free = self.free.clone();
        rng.shuffle(&mut free);
        let mut start = 0;
        for target in 0..=n {
            let end = (start + left[target]).min(free.len());
            dealt[target].extend_from_slice(&free[start..end]);
            start = end;
        }
        let with = |known: Hand, cards: &[u8]| {
            let mut h = known;
            for &c in cards {
                h.add(c);
            }
            h
        };
        let hands = (0..n).map(|s| with(self.known[s], &dealt[s])).collect();
        Ok((hands, with(Hand::default(), &dealt[n])))
    }

    fn make_room(&self, card: u8, dealt: &mut [Vec<u8>], left: &mut [usize]) -> Result<usize, String> {
        // parent[bin]: None = not reached; Some(None) = a start bin; Some(Some((source, moved))).
        let mut parent: Vec<Option<Option<(usize, u8)>>> = vec![None; self.players + 1];
        let mut queue = VecDeque::new();
        for &b in &self.eligible[card as usize] {
            parent[b] = Some(None);
            queue.push_back(b);
        }
        while let Some(source) = queue.pop_front() {
            let mut seen = [false; 52];
            let distinct: Vec<u8> =
                dealt[source].iter().copied().filter(|&c| !std::mem::replace(&mut seen[c as usize], true)).collect();
            for moved in distinct {
                for &target in &self.eligible[moved as usize] {
                    if parent[target].is_some() {
                        continue;
                    }
                    parent[target] = Some(Some((source, moved)));
                    if left[target] > 0 {
                        let mut target = target;
                        while let Some(Some((origin, shifted))) = parent[target] {
                            if let Some(i) = dealt[origin].iter().position(|&c| c == shifted) {
                                dealt[origin].remove(i);
                            }
                            dealt[target].push(shifted);
                            left[target] -= 1;
                            left[origin] += 1;
                            target = origin;
                        }
                        return Ok(target);
                    }
                    queue.push_back(target);
                }
            }
        }
        Err(format!("no world consistent with the view has room for {}", crate::cards::code(card)))
    }
}
