//! One game of Cancellation Hearts, from the seeded deal to the last hand.
//!
//! The state is a plain struct of masks. Decisions are one flat action space: cards 0..51 (in
//! the pass phase one card is passed at a time, the lowest seat still to pass first), and the
//! two moon options 52 and 53. Every rule and every error code follows `hearts_core.state`.

use std::sync::Arc;

use crate::cards::{self, Hand, HEARTS_MASK, NON_HEART, NON_POINT, POINT_MASK, SUIT_MASKS};
use crate::deal::deal_hand;
use crate::rng::Rng;

pub const MIN_PLAYERS: usize = 6;
pub const MAX_PLAYERS: usize = 11;
pub const NUM_ACTIONS: usize = 54;
pub const MOON_SELF_MINUS_26: u8 = 52;
pub const MOON_OTHERS_PLUS_26: u8 = 53;
pub const PASS_COUNT: usize = 3;
/// The most cards a hand has played (two decks less the kitty).
pub const MAX_PLAYS: usize = 104;
const HAND_POINTS: i32 = 52;
const MOON_POINTS: i32 = 26;

/// A decision: a card 0..51, or a moon option 52/53.
pub type Action = u8;

/// Where the game stands. `Deal` is only seen by a game that is dealt by hand ([`Game::manual`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Pass = 0,
    Play = 1,
    Moon = 2,
    Over = 3,
    Deal = 4,
}

/// The rule an action or a record breaks, with its conformance code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Illegal {
    BadPlayerCount,
    BadRotation,
    BadDeal,
    BadPass,
    BadPassCount,
    PassNotInHand,
    NotInHand,
    FirstLeadRestricted,
    HeartsNotBroken,
    MustFollowSuit,
    Incomplete,
    ExtraPlays,
    BadMoonChoice,
    GameAlreadyOver,
    OutOfTurn,
}

impl Illegal {
    /// The conformance code (`hearts_core.errors`).
    pub fn code(self) -> &'static str {
        match self {
            Illegal::BadPlayerCount => "BAD_PLAYER_COUNT",
            Illegal::BadRotation => "BAD_ROTATION",
            Illegal::BadDeal => "BAD_DEAL",
            Illegal::BadPass => "BAD_PASS",
            Illegal::BadPassCount => "BAD_PASS_COUNT",
            Illegal::PassNotInHand => "PASS_NOT_IN_HAND",
            Illegal::NotInHand => "NOT_IN_HAND",
            Illegal::FirstLeadRestricted => "FIRST_LEAD_RESTRICTED",
            Illegal::HeartsNotBroken => "HEARTS_NOT_BROKEN",
            Illegal::MustFollowSuit => "MUST_FOLLOW_SUIT",
            Illegal::Incomplete => "INCOMPLETE",
            Illegal::ExtraPlays => "EXTRA_PLAYS",
            Illegal::BadMoonChoice => "BAD_MOON_CHOICE",
            Illegal::GameAlreadyOver => "GAME_ALREADY_OVER",
            Illegal::OutOfTurn => "OUT_OF_TURN",
        }
    }
}

/// An illegal action: the rule, a message, and where (as `HeartsError.to_json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IllegalAction {
    pub kind: Illegal,
    pub message: String,
    pub hand: Option<i64>,
    pub play: Option<i64>,
    pub seat: Option<i64>,
}

impl IllegalAction {
    pub fn new(kind: Illegal, message: impl Into<String>) -> IllegalAction {
        IllegalAction { kind, message: message.into(), hand: None, play: None, seat: None }
    }

    pub fn at(mut self, hand: Option<i64>, play: Option<i64>, seat: Option<i64>) -> IllegalAction {
        self.hand = hand;
        self.play = play;
        self.seat = seat;
        self
    }

    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl std::fmt::Display for IllegalAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for IllegalAction {}

/// The parameters a game is played under (`hearts_core.rules.Rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub players: usize,
    pub target_score: i64,
    pub max_hands: i64,
    pub first_dealer: usize,
}

impl Rules {
    /// Checks the parameters as `Rules.__post_init__` does.
    pub fn new(players: usize, target_score: i64, max_hands: i64, first_dealer: usize) -> Result<Rules, String> {
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&players) {
            return Err(format!("a table has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}"));
        }
        if target_score <= 0 {
            return Err(format!("target_score must be positive, not {target_score}"));
        }
        if max_hands <= 0 {
            return Err(format!("max_hands must be positive, not {max_hands}"));
        }
        if first_dealer >= players {
            return Err(format!("first_dealer must be a seat 0..{}", players - 1));
        }
        Ok(Rules { players, target_score, max_hands, first_dealer })
    }

    pub fn hand_size(&self) -> usize {
        104 / self.players
    }

    pub fn kitty_size(&self) -> usize {
        104 % self.players
    }

    pub fn dealer(&self, hand_index: i64) -> usize {
        ((self.first_dealer as i64 + hand_index) % self.players as i64) as usize
    }
}

/// Where a game's hands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DealMode {
    /// The referee's deal from the seed (`hearts_core.deal.deal_hand`), byte for byte.
    Referee,
    /// [`crate::deal::fast_deal`]: the simulator's own shuffle, for training loops.
    Fast,
}

/// A deal: per seat the cards, and the kitty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deal {
    pub hands: Vec<Hand>,
    pub kitty: Hand,
}

/// What the last finished hand left, for outcomes and rewards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandEnd {
    pub points: [i32; MAX_PLAYERS],
    pub scores: [i32; MAX_PLAYERS],
    pub moon: i8,
    pub moon_choice: i8,
    pub uncollected: Hand,
    pub kitty_taker: i8,
}

/// The last completed trick (its cards stay readable until the next one completes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrickEnd {
    pub cards: [u8; MAX_PLAYERS],
    pub leader: u8,
    pub winner: i8,
}

#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    seed: Arc<str>,
    seed_hash: u64,
    deal_mode: DealMode,
    preset: Option<Arc<Vec<Option<Deal>>>>,
    auto_deal: bool,
    /// The generator of [`crate::policy`]'s random play; copied by `clone`.
    pub rng: Rng,
    phase: Phase,
    hand_index: i64,
    hands_done: i64,
    totals: [i64; MAX_PLAYERS],
    history: Vec<[i32; MAX_PLAYERS]>,
    winners: u16,
    // The hand in progress.
    hands: [Hand; MAX_PLAYERS],
    kitty: Hand,
    kitty_points: i32,
    passes: [[u8; PASS_COUNT]; MAX_PLAYERS],
    passed: [u8; MAX_PLAYERS],
    /// Bit per seat that has passed all three this hand.
    pass_done: u16,
    /// What each seat received this hand (empty until the passes are delivered).
    received: [Hand; MAX_PLAYERS],
    pass_seat: u8,
    trick: [u8; MAX_PLAYERS],
    trick_len: u8,
    /// The trick in progress as a multiset (at most two copies of a card).
    trick_hand: Hand,
    leader: u8,
    led: u8,
    seen: u64,
    dup: u64,
    trick_points: i32,
    tricks_done: u8,
    /// `rules.hand_size()`, kept to spare a division per trick.
    hand_size: u8,
    to_play: u8,
    hearts_broken: bool,
    points: [i32; MAX_PLAYERS],
    pending: Hand,
    pending_points: i32,
    kitty_taker: i8,
    moon_shooter: i8,
    played: Hand,
    voids: [u8; MAX_PLAYERS],
    plays_in_hand: u16,
    /// The cards played this hand in playing order (the first `plays_in_hand`): the completed
    /// tricks are read from it ([`Game::tricks`]).
    plays: [u8; MAX_PLAYS],
    /// The last completed trick and the last finished hand of this game object (None until one
    /// completes here: a game started at a later hand has none before it).
    last_trick: Option<TrickEnd>,
    last_hand: Option<HandEnd>,
}

impl Game {
    /// A game whose hands are dealt from `seed` as the referee deals them.
    pub fn new(rules: Rules, seed: &str) -> Game {
        Game::with_deal(rules, seed, DealMode::Referee)
    }

    /// A game whose hands are dealt from `seed` as `mode` says.
    pub fn with_deal(rules: Rules, seed: &str, mode: DealMode) -> Game {
        let mut game = Game::manual(rules);
        game.seed = Arc::from(seed);
        game.seed_hash = crate::deal::seed_hash(seed);
        game.deal_mode = mode;
        game.auto_deal = true;
        game.deal_next();
        game
    }

    /// A game waiting for [`Game::start_hand`] before each hand (replay).
    pub fn manual(rules: Rules) -> Game {
        Game {
            rules,
            seed: Arc::from(""),
            seed_hash: crate::deal::seed_hash(""),
            deal_mode: DealMode::Referee,
            preset: None,
            auto_deal: false,
            rng: Rng::new(0),
            phase: Phase::Deal,
            hand_index: -1,
            hands_done: 0,
            totals: [0; MAX_PLAYERS],
            history: Vec::new(),
            winners: 0,
            hands: [Hand::default(); MAX_PLAYERS],
            kitty: Hand::default(),
            kitty_points: 0,
            passes: [[0; PASS_COUNT]; MAX_PLAYERS],
            passed: [0; MAX_PLAYERS],
            pass_done: 0,
            received: [Hand::default(); MAX_PLAYERS],
            pass_seat: 0,
            trick: [0; MAX_PLAYERS],
            trick_len: 0,
            trick_hand: Hand::default(),
            leader: 0,
            led: 0,
            seen: 0,
            dup: 0,
            trick_points: 0,
            tricks_done: 0,
            hand_size: rules.hand_size() as u8,
            to_play: 0,
            hearts_broken: false,
            points: [0; MAX_PLAYERS],
            pending: Hand::default(),
            pending_points: 0,
            kitty_taker: -1,
            moon_shooter: -1,
            played: Hand::default(),
            voids: [0; MAX_PLAYERS],
            plays_in_hand: 0,
            plays: [0; MAX_PLAYS],
            last_trick: None,
            last_hand: None,
        }
    }

    /// A game that starts at hand `hand_index` with the given totals; hand `k` is dealt from
    /// `preset[k]` when present, else from `seed`.
    pub fn resume(
        rules: Rules,
        seed: &str,
        preset: Vec<Option<Deal>>,
        hand_index: i64,
        totals: &[i64],
        history: Vec<[i32; MAX_PLAYERS]>,
    ) -> Result<Game, IllegalAction> {
        let mut game = Game::manual(rules);
        game.seed = Arc::from(seed);
        game.preset = Some(Arc::new(preset));
        game.auto_deal = true;
        game.hand_index = hand_index - 1;
        game.hands_done = hand_index;
        game.history = history;
        for (t, &v) in game.totals.iter_mut().zip(totals) {
            *t = v;
        }
        let deal = game.deal_for(hand_index);
        game.start_hand(&deal.hands, deal.kitty)?;
        Ok(game)
    }

    /// A game at the first trick of hand `hand_index`, the passes already made: `hands` are
    /// the hands after the passes. Later hands are dealt from `seed`.
    pub fn resume_playing(
        rules: Rules,
        seed: &str,
        hand_index: i64,
        totals: &[i64],
        history: Vec<[i32; MAX_PLAYERS]>,
        hands: &[Hand],
        kitty: Hand,
    ) -> Result<Game, IllegalAction> {
        let mut game = Game::manual(rules);
        game.seed = Arc::from(seed);
        game.auto_deal = true;
        game.hand_index = hand_index - 1;
        game.hands_done = hand_index;
        game.history = history;
        for (t, &v) in game.totals.iter_mut().zip(totals) {
            *t = v;
        }
        game.start_hand(hands, kitty)?;
        game.phase = Phase::Play;
        game.to_play = game.leader;
        Ok(game)
    }

    /// A game at the start of hand `hand_index` with the given cards, as an author builds one
    /// (`hearts_client.sim`'s `Game.from_hands`). Without `passes`, `hands` are as dealt and
    /// the game is at the start of passing; with `passes` (per seat its three cards, or none
    /// when unknown) the passes are made, `hands` are the hands after them and the game is at
    /// the first lead. `history` (per earlier hand, what it added to each total) is kept as
    /// the game's; later hands are dealt from `seed` as the referee deals them. Cards come as
    /// given from outside (any integer) and are checked: every error is `BAD_DEAL`, in the
    /// order the fallback checks (totals, hand index, sizes, cards, passes, history).
    #[allow(clippy::too_many_arguments)]
    pub fn from_hands(
        rules: Rules,
        seed: &str,
        hand_index: i64,
        totals: Option<&[i64]>,
        history: Option<&[Vec<i64>]>,
        hands: &[Vec<i64>],
        kitty: &[i64],
        passes: Option<&[Vec<i64>]>,
    ) -> Result<Game, IllegalAction> {
        let n = rules.players;
        let bad = |message: String| IllegalAction::new(Illegal::BadDeal, message);
        if let Some(t) = totals.filter(|t| t.len() != n) {
            return Err(bad(format!("expected {n} totals, not {}", t.len())));
        }
        if hand_index < 0 {
            return Err(bad(format!("hand_index must be 0 or more, not {hand_index}")));
        }
        let size = rules.hand_size();
        if hands.len() != n || hands.iter().any(|h| h.len() != size) || kitty.len() != rules.kitty_size() {
            return Err(bad(format!("expected {n} hands of {size} cards and a kitty of {}", rules.kitty_size())));
        }
        let mut counts = [0u8; 52];
        for &card in hands.iter().flatten().chain(kitty) {
            if !(0..52).contains(&card) || counts[card as usize] == 2 {
                return Err(bad(format!("card {card} is not a card or appears more than twice")));
            }
            counts[card as usize] += 1;
        }
        let cards_of = |list: &[i64]| list.iter().map(|&c| c as u8).collect::<Vec<u8>>();
        let passes: Option<Vec<Vec<u8>>> = match passes {
            None => None,
            Some(p) => {
                let shaped = p.len() == n
                    && p.iter()
                        .all(|x| (x.is_empty() || x.len() == PASS_COUNT) && x.iter().all(|c| (0..52).contains(c)));
                if !shaped {
                    return Err(bad(format!("passes must be {n} lists of 0 or {PASS_COUNT} cards")));
                }
                Some(p.iter().map(|x| cards_of(x)).collect())
            }
        };
        let mut rows = Vec::new();
        for row in history.unwrap_or(&[]) {
            if row.len() != n {
                return Err(bad(format!("each hand of history holds {n} scores, not {}", row.len())));
            }
            let mut scores = [0i32; MAX_PLAYERS];
            for (s, &v) in scores.iter_mut().zip(row) {
                *s = v as i32;
            }
            rows.push(scores);
        }
        let zeros = vec![0i64; n];
        let totals = totals.unwrap_or(&zeros);
        let dealt: Vec<Hand> = hands.iter().map(|h| Hand::from_cards(&cards_of(h))).collect();
        let kitty = Hand::from_cards(&cards_of(kitty));
        let Some(passes) = passes else {
            let mut preset = vec![None; hand_index as usize + 1];
            preset[hand_index as usize] = Some(Deal { hands: dealt, kitty });
            return Game::resume(rules, seed, preset, hand_index, totals, rows);
        };
        let mut game = Game::resume_playing(rules, seed, hand_index, totals, rows, &dealt, kitty)?;
        let left = game.pass_left();
        for (seat, cards) in passes.iter().enumerate() {
            let target = if left { (seat + 1) % n } else { (seat + n - 1) % n };
            game.passes[seat][..cards.len()].copy_from_slice(cards);
            game.passed[seat] = cards.len() as u8;
            game.received[target] = Hand::from_cards(cards);
        }
        Ok(game)
    }

    fn deal_for(&self, index: i64) -> Deal {
        if let Some(Some(deal)) = self.preset.as_ref().and_then(|p| p.get(index as usize)) {
            return deal.clone();
        }
        let (hands, kitty) = match self.deal_mode {
            DealMode::Referee => deal_hand(self.rules.players, &self.seed, index as u32),
            DealMode::Fast => crate::deal::fast_deal(self.rules.players, self.seed_hash, index as u32),
        };
        Deal { hands, kitty }
    }

    fn deal_next(&mut self) {
        let index = self.hand_index + 1;
        if self.preset.is_none() {
            // The common case, without allocating: straight into an array of hands.
            let n = self.rules.players;
            let mut hands = [Hand::default(); MAX_PLAYERS];
            let kitty = match self.deal_mode {
                DealMode::Referee => crate::deal::deal_hand_into(n, &self.seed, index as u32, &mut hands),
                DealMode::Fast => crate::deal::fast_deal_into(n, self.seed_hash, index as u32, &mut hands),
            };
            self.begin_hand(&hands[..n], kitty);
            return;
        }
        let deal = self.deal_for(index);
        self.begin_hand(&deal.hands, deal.kitty);
    }

    // ------------------------------------------------------------------ accessors
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    pub fn players(&self) -> usize {
        self.rules.players
    }
    pub fn seed(&self) -> &str {
        &self.seed
    }
    pub fn deal_mode(&self) -> DealMode {
        self.deal_mode
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn hand_index(&self) -> i64 {
        self.hand_index
    }
    pub fn hands_done(&self) -> i64 {
        self.hands_done
    }
    pub fn trick_index(&self) -> usize {
        self.tricks_done as usize
    }
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }
    pub fn dealer(&self) -> usize {
        self.rules.dealer(self.hand_index.max(0))
    }
    /// Hand 0 passes left (+1), hand 1 right (-1), alternating.
    pub fn pass_left(&self) -> bool {
        self.hand_index.max(0) % 2 == 0
    }
    pub fn hand(&self, seat: usize) -> Hand {
        self.hands[seat]
    }
    pub fn hands(&self) -> &[Hand] {
        &self.hands[..self.rules.players]
    }
    pub fn kitty(&self) -> Hand {
        self.kitty
    }
    pub fn kitty_points(&self) -> i32 {
        self.kitty_points
    }
    pub fn trick_cards(&self) -> &[u8] {
        &self.trick[..self.trick_len as usize]
    }
    pub fn leader(&self) -> usize {
        self.leader as usize
    }
    pub fn hearts_broken(&self) -> bool {
        self.hearts_broken
    }
    /// Points collected this hand, the kitty included once taken.
    pub fn points(&self) -> &[i32] {
        &self.points[..self.rules.players]
    }
    /// Points of the trick cards collected (what every seat sees: the kitty left out).
    pub fn public_taken(&self, seat: usize) -> i32 {
        self.points[seat] - if self.kitty_taker == seat as i8 { self.kitty_points } else { 0 }
    }
    /// Points of the set-aside trick cards waiting for the next winner (the kitty left out).
    pub fn public_pending(&self) -> i32 {
        self.pending_points - if self.kitty_taker < 0 { self.kitty_points } else { 0 }
    }
    pub fn pending(&self) -> Hand {
        self.pending
    }
    pub fn totals(&self) -> &[i64] {
        &self.totals[..self.rules.players]
    }
    pub fn history(&self) -> &[[i32; MAX_PLAYERS]] {
        &self.history
    }
    pub fn winners(&self) -> Vec<usize> {
        (0..self.rules.players).filter(|s| self.winners >> s & 1 != 0).collect()
    }
    pub fn kitty_taker(&self) -> Option<usize> {
        (self.kitty_taker >= 0).then_some(self.kitty_taker as usize)
    }
    pub fn moon_shooter(&self) -> Option<usize> {
        (self.moon_shooter >= 0).then_some(self.moon_shooter as usize)
    }
    /// Cards played this hand, the trick in progress included.
    pub fn played(&self) -> Hand {
        self.played
    }
    /// Per seat, the suits (bit per suit) it has shown void of this hand.
    pub fn voids(&self, seat: usize) -> u8 {
        self.voids[seat]
    }
    pub fn plays_in_hand(&self) -> usize {
        self.plays_in_hand as usize
    }
    pub fn passed_cards(&self, seat: usize) -> &[u8] {
        &self.passes[seat][..self.passed[seat] as usize]
    }
    /// The cards `seat` received this hand (empty until the passes are delivered).
    pub fn received(&self, seat: usize) -> Hand {
        self.received[seat]
    }

    /// Records what `seat` passed and received this hand in a game started after the passes
    /// ([`Game::resume_playing`]), so that its observation shows them as in the real game.
    pub fn set_known_pass(&mut self, seat: usize, passed: &[u8], received: Hand) -> Result<(), String> {
        if seat >= self.rules.players || passed.len() > PASS_COUNT || received.len() as usize > PASS_COUNT {
            return Err(format!("a seat passes and receives at most {PASS_COUNT} cards"));
        }
        if passed.iter().any(|&c| c >= 52) {
            return Err("a passed card is not a card".into());
        }
        self.passes[seat][..passed.len()].copy_from_slice(passed);
        self.passed[seat] = passed.len() as u8;
        self.received[seat] = received;
        Ok(())
    }
    /// The last trick completed in this game (at the start of a hand, the previous hand's
    /// last), or None before one completes.
    pub fn last_trick(&self) -> Option<&TrickEnd> {
        self.last_trick.as_ref()
    }
    /// The last hand finished in this game, or None before one finishes.
    pub fn last_hand(&self) -> Option<&HandEnd> {
        self.last_hand.as_ref()
    }

    /// The completed tricks of the hand in progress in playing order (at game over: of the
    /// last hand), each with its leader and its winner (-1: set aside).
    pub fn tricks(&self) -> Vec<TrickEnd> {
        let n = self.rules.players;
        let mut leader = self.first_leader();
        let mut out = Vec::with_capacity(self.tricks_done as usize);
        for cards in self.plays[..self.tricks_done as usize * n].chunks_exact(n) {
            let winner = trick_winner(cards).map_or(-1, |i| ((leader + i) % n) as i8);
            let mut trick = TrickEnd { cards: [0; MAX_PLAYERS], leader: leader as u8, winner };
            trick.cards[..n].copy_from_slice(cards);
            out.push(trick);
            if winner >= 0 {
                leader = winner as usize;
            }
        }
        out
    }

    /// The cards waiting for a trick's winner: the kitty until it is taken and the cards of
    /// set-aside tricks (at the end of a hand, those nobody took).
    pub fn uncollected(&self) -> Hand {
        self.pending
    }
    /// The seat of the first trick's lead this hand.
    pub fn first_leader(&self) -> usize {
        (self.dealer() + 1) % self.rules.players
    }

    /// The seat to act, or `None` when the game is over (or waits for a deal).
    pub fn current_player(&self) -> Option<usize> {
        match self.phase {
            Phase::Pass => Some(self.pass_seat as usize),
            Phase::Play | Phase::Moon => Some(self.to_play as usize),
            Phase::Over | Phase::Deal => None,
        }
    }

    // ------------------------------------------------------------------ dealing
    /// Starts the next hand with a checked deal (per seat card lists, and the kitty).
    pub fn start_hand_cards(&mut self, deal: &[Vec<u8>], kitty: &[u8]) -> Result<(), IllegalAction> {
        let index = self.hand_index + 1;
        self.check_can_deal(index)?;
        let n = self.rules.players;
        let size = self.rules.hand_size();
        if deal.len() != n || deal.iter().any(|h| h.len() != size) || kitty.len() != self.rules.kitty_size() {
            return Err(IllegalAction::new(
                Illegal::BadDeal,
                format!("expected {n} hands of {size} cards and a kitty of {}", self.rules.kitty_size()),
            )
            .at(Some(index), None, None));
        }
        let mut counts = [0u8; 52];
        for &c in deal.iter().flatten().chain(kitty) {
            counts[c as usize] += 1;
            if counts[c as usize] > 2 {
                return Err(IllegalAction::new(Illegal::BadDeal, "a card appears more than twice in the deal").at(
                    Some(index),
                    None,
                    None,
                ));
            }
        }
        let hands: Vec<Hand> = deal
            .iter()
            .map(|h| {
                let mut hand = Hand::default();
                h.iter().for_each(|&c| {
                    hand.add(c);
                });
                hand
            })
            .collect();
        let mut k = Hand::default();
        kitty.iter().for_each(|&c| {
            k.add(c);
        });
        self.begin_hand(&hands, k);
        Ok(())
    }

    /// Starts the next hand with a deal of hands (checked as [`Game::start_hand_cards`]).
    pub fn start_hand(&mut self, hands: &[Hand], kitty: Hand) -> Result<(), IllegalAction> {
        let lists: Vec<Vec<u8>> = hands.iter().map(Hand::cards).collect();
        self.start_hand_cards(&lists, &kitty.cards())
    }

    fn check_can_deal(&self, index: i64) -> Result<(), IllegalAction> {
        if self.phase == Phase::Over {
            return Err(IllegalAction::new(Illegal::GameAlreadyOver, "the game is over; no further hand may be dealt")
                .at(Some(index), None, None));
        }
        if self.phase != Phase::Deal {
            return Err(IllegalAction::new(
                Illegal::OutOfTurn,
                format!("hand {} is still in progress", self.hand_index),
            )
            .at(Some(index), None, None));
        }
        Ok(())
    }

    fn begin_hand(&mut self, hands: &[Hand], kitty: Hand) {
        let n = self.rules.players;
        self.hand_index += 1;
        self.hands = [Hand::default(); MAX_PLAYERS];
        self.hands[..n].copy_from_slice(&hands[..n]);
        self.kitty = kitty;
        self.kitty_points = kitty.points();
        self.passed = [0; MAX_PLAYERS];
        self.pass_done = 0;
        self.received = [Hand::default(); MAX_PLAYERS];
        self.pass_seat = 0;
        self.trick_len = 0;
        self.tricks_done = 0;
        self.seen = 0;
        self.dup = 0;
        self.trick_points = 0;
        self.hearts_broken = false;
        self.points = [0; MAX_PLAYERS];
        self.pending = kitty;
        self.pending_points = self.kitty_points;
        self.kitty_taker = -1;
        self.moon_shooter = -1;
        self.played = Hand::default();
        self.voids = [0; MAX_PLAYERS];
        self.plays_in_hand = 0;
        self.leader = ((self.dealer() + 1) % n) as u8;
        self.to_play = self.leader;
        self.phase = Phase::Pass;
    }

    // ------------------------------------------------------------------ legality
    /// The legal cards of the seat to play (a 52-bit mask; 0 outside play).
    #[inline]
    pub fn legal_play_mask(&self) -> u64 {
        if self.phase != Phase::Play {
            return 0;
        }
        let once = self.hands[self.to_play as usize].once;
        if self.trick_len > 0 {
            let follow = once & SUIT_MASKS[self.led as usize];
            return if follow != 0 { follow } else { once };
        }
        let restricted = if self.tricks_done == 0 {
            once & NON_POINT
        } else if !self.hearts_broken {
            once & NON_HEART
        } else {
            once
        };
        if restricted != 0 {
            restricted
        } else {
            once
        }
    }

    /// The legal actions as a 54-bit mask.
    #[inline]
    pub fn legal_mask(&self) -> u64 {
        match self.phase {
            Phase::Pass => self.hands[self.pass_seat as usize].once,
            Phase::Play => self.legal_play_mask(),
            Phase::Moon => (1 << MOON_SELF_MINUS_26) | (1 << MOON_OTHERS_PLUS_26),
            Phase::Over | Phase::Deal => 0,
        }
    }

    fn here(&self, seat: usize) -> (Option<i64>, Option<i64>, Option<i64>) {
        (Some(self.hand_index), Some(self.plays_in_hand as i64), Some(seat as i64))
    }

    /// Why the seat to play may not play `card` (`hearts_core.State.check_play`), if it may not.
    pub fn check_play(&self, card: u8) -> Result<(), IllegalAction> {
        let player = self.to_play as usize;
        if self.phase != Phase::Play {
            let message = if self.phase == Phase::Over { "the game is over" } else { "no card is expected now" };
            return Err(IllegalAction::new(Illegal::OutOfTurn, message).at(
                Some(self.hand_index),
                None,
                self.current_player().map(|s| s as i64),
            ));
        }
        let (h, p, s) = self.here(player);
        let once = self.hands[player].once;
        if card >= 52 || once >> card & 1 == 0 {
            let name = if card < 52 { cards::code(card) } else { format!("action {card}") };
            return Err(IllegalAction::new(Illegal::NotInHand, format!("{name} is not in the hand")).at(h, p, s));
        }
        let bit = 1u64 << card;
        if self.trick_len > 0 {
            let suit_mask = SUIT_MASKS[self.led as usize];
            if bit & suit_mask == 0 && once & suit_mask != 0 {
                return Err(IllegalAction::new(
                    Illegal::MustFollowSuit,
                    format!(
                        "{} does not follow {}",
                        cards::code(card),
                        ["clubs", "diamonds", "hearts", "spades"][self.led as usize]
                    ),
                )
                .at(h, p, s));
            }
        } else if self.tricks_done == 0 {
            if bit & POINT_MASK != 0 && once & NON_POINT != 0 {
                return Err(IllegalAction::new(
                    Illegal::FirstLeadRestricted,
                    "the first lead may not be a heart or the Black Maria",
                )
                .at(h, p, s));
            }
        } else if bit & HEARTS_MASK != 0 && !self.hearts_broken && once & NON_HEART != 0 {
            return Err(IllegalAction::new(
                Illegal::HeartsNotBroken,
                "hearts may not be led until a heart or QS is played",
            )
            .at(h, p, s));
        }
        Ok(())
    }

    // ------------------------------------------------------------------ actions
    /// Applies one action of the flat action space.
    pub fn apply_action(&mut self, action: Action) -> Result<(), IllegalAction> {
        match self.phase {
            Phase::Play => self.play(action),
            Phase::Pass if action < 52 => self.pass_card(action),
            Phase::Moon if action >= 52 => self.choose_moon(action == MOON_OTHERS_PLUS_26),
            Phase::Over | Phase::Deal => {
                Err(IllegalAction::new(Illegal::OutOfTurn, "the game is over").at(Some(self.hand_index), None, None))
            }
            Phase::Pass => Err(IllegalAction::new(Illegal::OutOfTurn, "a card is to be passed now").at(
                Some(self.hand_index),
                None,
                Some(self.pass_seat as i64),
            )),
            Phase::Moon => Err(IllegalAction::new(Illegal::OutOfTurn, "the moon shooter is to choose now").at(
                Some(self.hand_index),
                None,
                Some(self.to_play as i64),
            )),
        }
    }

    /// Applies a legal action without checking it (the caller took it from the legal mask).
    #[inline]
    pub fn apply_legal(&mut self, action: Action) {
        match self.phase {
            Phase::Play => self.play_unchecked(action),
            Phase::Pass => self.pass_unchecked(action),
            Phase::Moon => self.finish_hand(Some(action == MOON_OTHERS_PLUS_26)),
            Phase::Over | Phase::Deal => {}
        }
    }

    /// The current passing seat passes one card.
    pub fn pass_card(&mut self, card: u8) -> Result<(), IllegalAction> {
        let seat = self.pass_seat as usize;
        if self.phase != Phase::Pass {
            return Err(IllegalAction::new(Illegal::OutOfTurn, "no pass is expected now").at(
                Some(self.hand_index),
                None,
                Some(seat as i64),
            ));
        }
        if card >= 52 || self.hands[seat].once >> card & 1 == 0 {
            let name = if card < 52 { cards::code(card) } else { format!("action {card}") };
            return Err(IllegalAction::new(
                Illegal::PassNotInHand,
                format!("{name} is not in the hand (or not that many copies)"),
            )
            .at(Some(self.hand_index), None, Some(seat as i64)));
        }
        self.pass_unchecked(card);
        Ok(())
    }

    #[inline]
    fn pass_unchecked(&mut self, card: u8) {
        let seat = self.pass_seat as usize;
        self.hands[seat].take(card);
        let k = self.passed[seat] as usize;
        self.passes[seat][k] = card;
        self.passed[seat] += 1;
        if self.passed[seat] as usize == PASS_COUNT {
            self.seat_passed(seat);
        }
    }

    /// `seat` has passed its three: the lowest seat still to pass is next, or the passes go.
    #[inline]
    fn seat_passed(&mut self, seat: usize) {
        self.pass_done |= 1 << seat;
        let waiting = !self.pass_done & ((1u16 << self.rules.players) - 1);
        if waiting == 0 {
            self.deliver_passes();
        } else {
            self.pass_seat = waiting.trailing_zeros() as u8;
        }
    }

    /// `seat` passes three cards at once (`hearts_core.State.pass_cards`).
    pub fn apply_pass(&mut self, seat: usize, cards_: &[u8]) -> Result<(), IllegalAction> {
        let hand = Some(self.hand_index);
        if self.phase != Phase::Pass || seat >= self.rules.players {
            return Err(IllegalAction::new(Illegal::OutOfTurn, "no pass is expected now").at(
                hand,
                None,
                Some(seat as i64),
            ));
        }
        if self.passed[seat] != 0 {
            return Err(IllegalAction::new(Illegal::OutOfTurn, "this seat has already passed").at(
                hand,
                None,
                Some(seat as i64),
            ));
        }
        if cards_.len() != PASS_COUNT {
            return Err(IllegalAction::new(
                Illegal::BadPassCount,
                format!("pass exactly {PASS_COUNT} cards, not {}", cards_.len()),
            )
            .at(hand, None, Some(seat as i64)));
        }
        let mut held = self.hands[seat];
        for &c in cards_ {
            if c >= 52 || !held.remove(c) {
                let name = if c < 52 { cards::code(c) } else { format!("card {c}") };
                return Err(IllegalAction::new(
                    Illegal::PassNotInHand,
                    format!("{name} is not in the hand (or not that many copies)"),
                )
                .at(hand, None, Some(seat as i64)));
            }
        }
        self.hands[seat] = held;
        self.passes[seat].copy_from_slice(cards_);
        self.passed[seat] = PASS_COUNT as u8;
        self.seat_passed(seat);
        Ok(())
    }

    fn deliver_passes(&mut self) {
        let n = self.rules.players;
        let left = self.pass_left();
        for seat in 0..n {
            let target = if left { (seat + 1) % n } else { (seat + n - 1) % n };
            for k in 0..PASS_COUNT {
                self.hands[target].put(self.passes[seat][k]);
                self.received[target].put(self.passes[seat][k]);
            }
        }
        self.phase = Phase::Play;
        self.to_play = self.leader;
    }

    /// The seat to play plays `card` (`hearts_core.State.play`).
    pub fn play(&mut self, card: u8) -> Result<(), IllegalAction> {
        if self.phase != Phase::Play || card >= 52 || self.legal_play_mask() >> card & 1 == 0 {
            self.check_play(card)?;
            unreachable!("legal_play_mask and check_play disagree on {card}");
        }
        self.play_unchecked(card);
        Ok(())
    }

    #[inline]
    fn play_unchecked(&mut self, card: u8) {
        let player = self.to_play as usize;
        let n = self.rules.players;
        self.hands[player].take(card);
        self.played.put(card);
        let bit = 1u64 << card;
        let suit = card / 13;
        if self.trick_len == 0 {
            self.led = suit;
            self.seen = 0;
            self.dup = 0;
            self.trick_points = 0;
            self.trick_hand = Hand::default();
            self.leader = player as u8;
        }
        self.trick_hand.put(card);
        if suit == self.led {
            if self.seen & bit != 0 {
                self.dup |= bit;
            } else {
                self.seen |= bit;
            }
        } else {
            self.voids[player] |= 1 << self.led;
        }
        self.trick_points += cards::points(card);
        self.trick[self.trick_len as usize] = card;
        self.trick_len += 1;
        self.plays[self.plays_in_hand as usize] = card;
        self.plays_in_hand += 1;
        if (self.trick_len as usize) < n {
            self.to_play = if player + 1 == n { 0 } else { player as u8 + 1 };
            return;
        }
        self.finish_trick();
    }

    fn finish_trick(&mut self) {
        let n = self.rules.players;
        // The trick's cards join the waiting ones (two copies at most of any card in all).
        let trick = self.trick_hand;
        self.pending.twice |= trick.twice | (self.pending.once & trick.once);
        self.pending.once |= trick.once;
        self.pending_points += self.trick_points;
        if self.trick_points > 0 {
            self.hearts_broken = true;
        }
        let single = self.seen & !self.dup;
        let leader = self.leader as usize;
        let mut next = leader;
        let mut winner = -1i8;
        if single != 0 {
            let top = cards::top(single);
            let index = self.trick[..n].iter().position(|&c| c == top).unwrap_or(0);
            let w = if leader + index >= n { leader + index - n } else { leader + index };
            winner = w as i8;
            if self.kitty_taker < 0 {
                self.kitty_taker = winner;
            }
            self.points[w] += self.pending_points;
            self.pending = Hand::default();
            self.pending_points = 0;
            next = w;
        }
        self.last_trick = Some(TrickEnd { cards: self.trick, leader: self.leader, winner });
        self.tricks_done += 1;
        self.trick_len = 0;
        if self.tricks_done == self.hand_size {
            self.finish_play();
        } else {
            self.leader = next as u8;
            self.to_play = next as u8;
        }
    }

    fn finish_play(&mut self) {
        let n = self.rules.players;
        match (0..n).find(|&s| self.points[s] == HAND_POINTS) {
            Some(shooter) => {
                self.moon_shooter = shooter as i8;
                self.to_play = shooter as u8;
                self.phase = Phase::Moon;
            }
            None => self.finish_hand(None),
        }
    }

    /// The moon shooter's choice: `others_plus_26` true adds 26 to everyone else.
    pub fn choose_moon(&mut self, others_plus_26: bool) -> Result<(), IllegalAction> {
        if self.phase != Phase::Moon {
            return Err(IllegalAction::new(Illegal::OutOfTurn, "no moon choice is expected from this seat").at(
                Some(self.hand_index),
                None,
                None,
            ));
        }
        self.finish_hand(Some(others_plus_26));
        Ok(())
    }

    fn finish_hand(&mut self, choice: Option<bool>) {
        let n = self.rules.players;
        let mut scores = [0i32; MAX_PLAYERS];
        match (self.moon_shooter, choice) {
            (s, Some(others)) if s >= 0 => {
                let s = s as usize;
                if others {
                    scores[..n].fill(MOON_POINTS);
                    scores[s] = 0;
                } else {
                    scores[s] = -MOON_POINTS;
                }
            }
            _ => scores[..n].copy_from_slice(&self.points[..n]),
        }
        for (total, &score) in self.totals[..n].iter_mut().zip(&scores[..n]) {
            *total += i64::from(score);
        }
        self.history.push(scores);
        self.last_hand = Some(HandEnd {
            points: self.points,
            scores,
            moon: self.moon_shooter,
            moon_choice: match choice {
                Some(true) => 1,
                Some(false) => 0,
                None => -1,
            },
            uncollected: self.pending,
            kitty_taker: self.kitty_taker,
        });
        // The hand's facts (its tricks, points, what nobody took) stay readable until the next
        // hand is dealt, and for good once the game is over.
        self.hands_done += 1;
        let totals = &self.totals[..n];
        let high = totals.iter().copied().max().unwrap_or(0);
        if high >= self.rules.target_score || self.hands_done >= self.rules.max_hands {
            let low = totals.iter().copied().min().unwrap_or(0);
            self.winners = totals.iter().enumerate().filter(|(_, &t)| t == low).fold(0, |m, (s, _)| m | 1 << s);
            self.phase = Phase::Over;
        } else if self.auto_deal {
            self.deal_next();
        } else {
            self.phase = Phase::Deal;
        }
    }

    /// Per seat, `-total` (higher is better).
    pub fn returns(&self) -> Vec<f64> {
        self.totals().iter().map(|&t| -(t as f64)).collect()
    }
}

/// The index in `cards` (one trick, in playing order) of the winning card: the highest card of
/// the suit led played exactly once; None when every card of the suit led is cancelled.
pub fn trick_winner(cards: &[u8]) -> Option<usize> {
    let led = SUIT_MASKS[(cards[0] / 13) as usize];
    let (mut seen, mut dup) = (0u64, 0u64);
    for &c in cards {
        let bit = 1u64 << c;
        dup |= seen & bit;
        seen |= bit;
    }
    let single = seen & !dup & led;
    (single != 0).then(|| {
        let top = cards::top(single);
        cards.iter().position(|&c| c == top).unwrap_or(0)
    })
}
