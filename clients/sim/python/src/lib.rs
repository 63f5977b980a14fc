//! `hearts_sim`: the Cancellation Hearts simulator core (hearts_sim_core) as a Python module.
//!
//! The API is the contract of `hearts_client.sim` (docs/SIMULATOR.md): `Game`, `VecGame`,
//! `IllegalAction`, the action and phase constants, plus `replay` and `deal_hand`. Long loops
//! (named-policy play-outs, batched random stepping) run without the GIL; a Rust panic surfaces
//! as `pyo3_runtime.PanicException`, never as an abort.

use std::ffi::CStr;

use hearts_sim_core::cards::{self, Hand};
use hearts_sim_core::game::{
    Deal, DealMode, Game as Core, Illegal, IllegalAction as CoreIllegal, Phase, Rules, MAX_PLAYERS,
};
use hearts_sim_core::obs::{obs_size, write_observation};
use hearts_sim_core::policy::{self, Named};
use hearts_sim_core::pyrandom::PyRandom;
use hearts_sim_core::rng::Rng;
use hearts_sim_core::sampler::{TrickSeen, ViewFacts, WorldSampler};
use hearts_sim_core::{replay as core_replay, NUM_ACTIONS};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

create_exception!(
    hearts_sim,
    IllegalAction,
    PyValueError,
    "An action the rules forbid; `.code` is its conformance code."
);

const BUILD_ID: &str = env!("HEARTS_SIM_BUILD_ID");

fn illegal(py: Python<'_>, e: &CoreIllegal) -> PyErr {
    let err = IllegalAction::new_err(e.to_string());
    let value = err.value(py);
    let _ = value.setattr("code", e.code());
    let _ = value.setattr("message", &e.message);
    let _ = value.setattr("hand", e.hand);
    let _ = value.setattr("play", e.play);
    let _ = value.setattr("seat", e.seat);
    err
}

/// A one-byte element: numpy uint8, int8 and bool buffers all qualify.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Byte(u8);

unsafe impl Element for Byte {
    fn is_compatible_format(format: &CStr) -> bool {
        let f = format.to_bytes();
        let f = if f.len() == 2 && b"@=<>!".contains(&f[0]) { &f[1..] } else { f };
        matches!(f, b"B" | b"b" | b"?" | b"c")
    }
}

fn writable<T: Element>(buf: &PyBuffer<T>, len: usize, what: &str) -> PyResult<()> {
    if buf.readonly() {
        return Err(PyValueError::new_err(format!("{what}: the buffer is read-only; pass a writable array")));
    }
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(format!("{what}: the buffer must be C-contiguous")));
    }
    if buf.item_count() != len {
        return Err(PyValueError::new_err(format!(
            "{what}: the buffer holds {} items, {len} are needed",
            buf.item_count()
        )));
    }
    Ok(())
}

/// The set bits of a mask, lowest first (builds a list with no intermediate vector).
struct Bits(u64);

impl Iterator for Bits {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(bit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Bits {}

/// Cards as a list of ints (a `Vec<u8>` would become `bytes`).
fn ints(cards: Vec<u8>) -> Vec<u16> {
    cards.into_iter().map(u16::from).collect()
}

fn check_action(a: i64) -> PyResult<u8> {
    if (0..NUM_ACTIONS as i64).contains(&a) {
        Ok(a as u8)
    } else {
        Err(PyValueError::new_err(format!("an action is 0..{}, not {a}", NUM_ACTIONS - 1)))
    }
}

fn seed_text(seed: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(seed.str()?.to_string())
}

/// The rules, checked in the order `hearts_core.rules.Rules` checks them: a bad table size is
/// an IllegalAction `BAD_PLAYER_COUNT` (as `hearts_core`'s `BadPlayerCount`), the rest a ValueError.
fn make_rules(players: i64, target_score: i64, max_hands: i64, first_dealer: i64) -> PyResult<Rules> {
    if !(6..=11).contains(&players) {
        return Python::with_gil(|py| {
            Err(illegal(
                py,
                &CoreIllegal::new(Illegal::BadPlayerCount, format!("a table has 6 to 11 players, not {players}")),
            ))
        });
    }
    let first_dealer = usize::try_from(first_dealer).unwrap_or(usize::MAX);
    Rules::new(players as usize, target_score, max_hands, first_dealer).map_err(PyValueError::new_err)
}

/// A seed as both backends take it: any object, used as its `str()`.
struct SeedText(String);

impl SeedText {
    fn of(text: &str) -> SeedText {
        SeedText(text.to_string())
    }
}

impl<'py> FromPyObject<'py> for SeedText {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(SeedText(obj.str()?.to_string()))
    }
}

/// A policy argument: its default (left out by the caller), or whatever was given (checked by
/// the method, so that a bad one raises the fallback's ValueError, not a TypeError).
enum PolicyArg<'py> {
    Default,
    Given(Bound<'py, PyAny>),
}

impl<'py> FromPyObject<'py> for PolicyArg<'py> {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(PolicyArg::Given(obj.clone()))
    }
}

fn hand_of(obj: &Bound<'_, PyAny>) -> PyResult<Hand> {
    // A hearts_core CardSet (once/twice masks), or an iterable of cards.
    if let (Ok(once), Ok(twice)) = (obj.getattr("once"), obj.getattr("twice")) {
        let once: u64 = once.extract()?;
        let twice: u64 = twice.extract()?;
        return Ok(Hand { once, twice });
    }
    let mut hand = Hand::default();
    for card in obj.try_iter()? {
        let c: i64 = card?.extract()?;
        if !(0..52).contains(&c) || !hand.add(c as u8) {
            return Err(PyValueError::new_err(format!("card {c} is not a card 0..51, or is held three times")));
        }
    }
    Ok(hand)
}

fn deal_mode(deal: &str) -> PyResult<DealMode> {
    match deal {
        "referee" => Ok(DealMode::Referee),
        "fast" => Ok(DealMode::Fast),
        other => Err(PyValueError::new_err(format!("deal must be 'referee' or 'fast', not '{other}'"))),
    }
}

/// A play-out policy: a named one (None: a callable, to be called).
fn parse_policy(policy: &Bound<'_, PyAny>) -> PyResult<Option<Named>> {
    if let Some(named) = policy.downcast::<PyString>().ok().and_then(|name| Named::parse(name.to_str().ok()?)) {
        return Ok(Some(named));
    }
    if policy.is_callable() {
        return Ok(None);
    }
    Err(PyValueError::new_err(format!("unknown policy {}: use 'random', 'heuristic' or a callable", policy.repr()?)))
}

/// One game of Cancellation Hearts, dealt from a seed as the referee deals it.
#[pyclass(module = "hearts_sim")]
#[derive(Clone)]
pub struct Game {
    inner: Core,
}

#[pymethods]
impl Game {
    /// `deal="referee"` deals as the referee (`hearts_core.deal.deal_hand`); `deal="fast"`
    /// uses the simulator's own shuffle (native only: several times cheaper, not a record's).
    #[new]
    #[pyo3(
        signature = (players, seed = SeedText::of("0"), *, target_score = 150, max_hands = 200, first_dealer = 0, deal = "referee"),
        text_signature = "(players, seed=0, *, target_score=150, max_hands=200, first_dealer=0, deal='referee')"
    )]
    fn new(
        players: i64,
        seed: SeedText,
        target_score: i64,
        max_hands: i64,
        first_dealer: i64,
        deal: &str,
    ) -> PyResult<Game> {
        let mode = deal_mode(deal)?;
        let rules = make_rules(players, target_score, max_hands, first_dealer)?;
        Ok(Game { inner: Core::with_deal(rules, &seed.0, mode) })
    }

    #[getter]
    fn players(&self) -> usize {
        self.inner.players()
    }
    #[getter]
    fn seed(&self) -> &str {
        self.inner.seed()
    }
    #[getter]
    fn target_score(&self) -> i64 {
        self.inner.rules().target_score
    }
    #[getter]
    fn max_hands(&self) -> i64 {
        self.inner.rules().max_hands
    }
    #[getter]
    fn first_dealer(&self) -> usize {
        self.inner.rules().first_dealer
    }
    /// PASS=0, PLAY=1, MOON=2, OVER=3.
    #[getter]
    fn phase(&self) -> u8 {
        match self.inner.phase() {
            Phase::Deal => 3,
            p => p as u8,
        }
    }
    /// The seat to act, -1 once the game is over.
    #[getter]
    fn current_player(&self) -> i64 {
        self.inner.current_player().map_or(-1, |s| s as i64)
    }
    #[getter]
    fn hand_index(&self) -> i64 {
        self.inner.hand_index()
    }
    #[getter]
    fn trick_index(&self) -> usize {
        self.inner.trick_index()
    }
    #[getter]
    fn dealer(&self) -> usize {
        self.inner.dealer()
    }
    /// "left" or "right": where this hand's passes go.
    #[getter]
    fn pass_direction(&self) -> &'static str {
        if self.inner.pass_left() {
            "left"
        } else {
            "right"
        }
    }
    #[getter]
    fn hearts_broken(&self) -> bool {
        self.inner.hearts_broken()
    }
    #[getter]
    fn kitty_taker(&self) -> Option<usize> {
        self.inner.kitty_taker()
    }
    #[getter]
    fn moon_shooter(&self) -> Option<usize> {
        self.inner.moon_shooter()
    }
    #[getter]
    fn obs_size(&self) -> usize {
        obs_size(self.inner.players())
    }

    fn is_over(&self) -> bool {
        self.inner.is_over()
    }

    /// The legal actions, sorted and distinct.
    fn legal_actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, Bits(self.inner.legal_mask()))
    }

    /// The legal actions as a 54-bit int.
    fn legal_mask(&self) -> u64 {
        self.inner.legal_mask()
    }

    /// Writes 0/1 per action into a writable one-byte buffer of length 54 (uint8 or bool).
    fn legal_mask_into(&self, py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<()> {
        let buffer = PyBuffer::<Byte>::get(buf)?;
        writable(&buffer, NUM_ACTIONS, "legal_mask_into")?;
        let mask = self.inner.legal_mask();
        let cells =
            buffer.as_mut_slice(py).ok_or_else(|| PyValueError::new_err("legal_mask_into: buffer not writable"))?;
        for (a, cell) in cells.iter().enumerate() {
            cell.set(Byte((mask >> a & 1) as u8));
        }
        Ok(())
    }

    /// Applies one action; an illegal one raises IllegalAction and changes nothing.
    fn apply_action(&mut self, py: Python<'_>, action: i64) -> PyResult<()> {
        let a = check_action(action)?;
        self.inner.apply_action(a).map_err(|e| illegal(py, &e))
    }

    /// The fast path for Python stepping: applies `action` as apply_action does (the same
    /// errors, the game unchanged on one) and returns the legal actions after it.
    fn step<'py>(&mut self, py: Python<'py>, action: i64) -> PyResult<Bound<'py, PyList>> {
        let a = check_action(action)?;
        self.inner.apply_action(a).map_err(|e| illegal(py, &e))?;
        PyList::new(py, Bits(self.inner.legal_mask()))
    }

    /// `seat` passes three cards at once (the seat must not have passed any yet).
    fn apply_pass(&mut self, py: Python<'_>, seat: i64, cards: Vec<i64>) -> PyResult<()> {
        if !(0..self.inner.players() as i64).contains(&seat) {
            return Err(PyValueError::new_err(format!("seat must be 0..{}, not {seat}", self.inner.players() - 1)));
        }
        let cs: Vec<u8> = cards.iter().map(|&c| if (0..52).contains(&c) { c as u8 } else { 255 }).collect();
        self.inner.apply_pass(seat as usize, &cs).map_err(|e| illegal(py, &e))
    }

    /// The seat to play plays `card`.
    fn apply_play(&mut self, py: Python<'_>, card: i64) -> PyResult<()> {
        let c = if (0..52).contains(&card) { card as u8 } else { 255 };
        self.inner.play(c).map_err(|e| illegal(py, &e))
    }

    /// The moon choice: 52 / "self_minus_26" or 53 / "others_plus_26".
    fn apply_moon(&mut self, py: Python<'_>, choice: &Bound<'_, PyAny>) -> PyResult<()> {
        let others = if let Ok(s) = choice.downcast::<PyString>() {
            match s.to_str()? {
                "self_minus_26" => Some(false),
                "others_plus_26" => Some(true),
                _ => None,
            }
        } else {
            match choice.extract::<i64>() {
                Ok(52) => Some(false),
                Ok(53) => Some(true),
                _ => None,
            }
        };
        let Some(others) = others else {
            let e = CoreIllegal::new(
                hearts_sim_core::game::Illegal::BadMoonChoice,
                format!("moon choice must be 52, 53, 'self_minus_26' or 'others_plus_26', not {}", choice.repr()?),
            )
            .at(Some(self.inner.hand_index()), None, None);
            return Err(illegal(py, &e));
        };
        self.inner.choose_moon(others).map_err(|e| illegal(py, &e))
    }

    /// A deep copy (the random generator used by play_out included).
    fn clone(&self) -> Game {
        Game { inner: self.inner.clone() }
    }

    fn __copy__(&self) -> Game {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Game {
        self.clone()
    }

    /// `seat`'s cards, sorted, a card held twice appearing twice.
    fn hand(&self, seat: i64) -> PyResult<Vec<u16>> {
        let seat = self.check_seat(seat)?;
        Ok(ints(self.inner.hand(seat).cards()))
    }

    fn kitty(&self) -> Vec<u16> {
        ints(self.inner.kitty().cards())
    }

    /// The trick in progress: (seat, card) in playing order.
    fn trick(&self) -> Vec<(usize, u8)> {
        let n = self.inner.players();
        let leader = self.inner.leader();
        self.inner.trick_cards().iter().enumerate().map(|(i, &c)| ((leader + i) % n, c)).collect()
    }

    /// The cards `seat` has chosen to pass so far this hand, sorted.
    fn passed(&self, seat: i64) -> PyResult<Vec<u16>> {
        let seat = self.check_seat(seat)?;
        let mut cards = ints(self.inner.passed_cards(seat).to_vec());
        cards.sort_unstable();
        Ok(cards)
    }

    /// The cards `seat` received this hand, sorted (empty until the passes are delivered).
    fn received(&self, seat: i64) -> PyResult<Vec<u16>> {
        let seat = self.check_seat(seat)?;
        Ok(ints(self.inner.received(seat).cards()))
    }

    /// The completed tricks of this hand (at game over: of the last hand) as (leader, cards in
    /// playing order, winner or -1 when set aside).
    fn tricks(&self) -> Vec<(usize, Vec<u16>, i8)> {
        let n = self.inner.players();
        self.inner.tricks().iter().map(|t| (t.leader as usize, ints(t.cards[..n].to_vec()), t.winner)).collect()
    }

    /// The cards waiting for a trick's winner (the kitty until taken, set-aside tricks'
    /// cards), sorted; at the end of a hand, those nobody took.
    fn uncollected(&self) -> Vec<u16> {
        ints(self.inner.uncollected().cards())
    }

    /// Points of the set-aside trick cards waiting for the next winner (the kitty left out:
    /// what every seat sees).
    fn set_aside_points(&self) -> i32 {
        self.inner.public_pending()
    }

    /// The last completed trick (at the start of a hand, the previous hand's last): (leader,
    /// cards in playing order, winner or None when set aside); None before any trick completes.
    fn last_trick(&self) -> Option<(usize, Vec<u16>, Option<usize>)> {
        let t = self.inner.last_trick()?;
        let n = self.inner.players();
        Some((t.leader as usize, ints(t.cards[..n].to_vec()), (t.winner >= 0).then_some(t.winner as usize)))
    }

    /// The last finished hand: {"index", "points", "scores", "moon", "uncollected",
    /// "kitty_taker"}, or None before the first hand ends.
    fn last_hand<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(h) = self.inner.last_hand() else {
            return Ok(None);
        };
        let n = self.inner.players();
        let d = PyDict::new(py);
        d.set_item("index", self.inner.hands_done() - 1)?;
        d.set_item("points", h.points[..n].to_vec())?;
        d.set_item("scores", h.scores[..n].to_vec())?;
        d.set_item("moon", (h.moon >= 0).then_some(h.moon as usize))?;
        d.set_item("uncollected", ints(h.uncollected.cards()))?;
        d.set_item("kitty_taker", (h.kitty_taker >= 0).then_some(h.kitty_taker as usize))?;
        Ok(Some(d))
    }

    /// Points collected this hand so far (the kitty counted once taken).
    fn points(&self) -> Vec<i32> {
        self.inner.points().to_vec()
    }

    /// Points of trick cards collected per seat (what every seat sees: no kitty).
    fn taken(&self) -> Vec<i32> {
        (0..self.inner.players()).map(|s| self.inner.public_taken(s)).collect()
    }

    fn totals(&self) -> Vec<i64> {
        self.inner.totals().to_vec()
    }

    /// Per finished hand, what it added to each total.
    fn hand_scores_history(&self) -> Vec<Vec<i32>> {
        let n = self.inner.players();
        self.inner.history().iter().map(|h| h[..n].to_vec()).collect()
    }

    /// Per seat, -total (higher is better).
    fn returns(&self) -> Vec<f64> {
        self.inner.returns()
    }

    /// The seats with the lowest total once the game is over, else [].
    fn winners(&self) -> Vec<usize> {
        if self.inner.is_over() {
            self.inner.winners()
        } else {
            Vec::new()
        }
    }

    /// Plays on with `policy` ("random", "heuristic" or a callable game -> action) to the end
    /// of the game, or until `hands` hands have ended. `seed` first reseeds the game's
    /// generator (used by "random") with its low 64 bits. Returns the number of actions taken.
    #[pyo3(
        signature = (policy = PolicyArg::Default, seed = None, *, hands = None),
        text_signature = "($self, /, policy='random', seed=None, *, hands=None)"
    )]
    fn play_out(
        slf: &Bound<'_, Self>,
        policy: PolicyArg<'_>,
        seed: Option<&Bound<'_, PyAny>>,
        hands: Option<i64>,
    ) -> PyResult<u64> {
        let py = slf.py();
        if let Some(s) = seed {
            // As the fallback: int(seed), its low 64 bits (a negative seed two's-complement).
            let low = py.get_type::<pyo3::types::PyInt>().call1((s,))?.call_method1("__and__", (u64::MAX,))?;
            slf.borrow_mut().inner.rng = Rng::new(low.extract()?);
        }
        if let Some(h) = hands.filter(|&h| h < 1) {
            return Err(PyValueError::new_err(format!("hands must be at least 1, not {h}")));
        }
        let named = match &policy {
            PolicyArg::Default => Some(Named::Random),
            PolicyArg::Given(p) => parse_policy(p)?,
        };
        if let Some(named) = named {
            let mut this = slf.borrow_mut();
            let game = &mut this.inner;
            return Ok(py.allow_threads(|| {
                let Some(h) = hands else { return policy::play_out(game, named, false) };
                let mut steps = 0;
                for _ in 0..h {
                    if game.is_over() {
                        break;
                    }
                    steps += policy::play_out(game, named, true);
                }
                steps
            }));
        }
        let PolicyArg::Given(policy) = policy else { unreachable!("a default policy is named") };
        let stop = hands.map(|h| slf.borrow().inner.hands_done() + h);
        let mut steps = 0;
        loop {
            {
                let this = slf.borrow();
                if this.inner.is_over() || stop.is_some_and(|stop| this.inner.hands_done() >= stop) {
                    break;
                }
            }
            let action: i64 = policy.call1((slf,))?.extract()?;
            let a = check_action(action)?;
            slf.borrow_mut().inner.apply_action(a).map_err(|e| illegal(py, &e))?;
            steps += 1;
        }
        Ok(steps)
    }

    /// The action a named policy ("random" draws from the game's generator) picks now, or None.
    #[pyo3(signature = (policy = PolicyArg::Default), text_signature = "($self, /, policy='heuristic')")]
    fn policy_action(&mut self, policy: PolicyArg<'_>) -> PyResult<Option<u8>> {
        let named = match &policy {
            PolicyArg::Default => Some(Named::Heuristic),
            PolicyArg::Given(p) => p.downcast::<PyString>().ok().and_then(|p| Named::parse(p.to_str().ok()?)),
        };
        match named {
            Some(Named::Heuristic) => Ok(policy::heuristic_action(&self.inner)),
            Some(Named::Random) => {
                let mut rng = self.inner.rng;
                let a = policy::random_action(&self.inner, &mut rng);
                self.inner.rng = rng;
                Ok(a)
            }
            None => {
                let shown = match &policy {
                    PolicyArg::Given(p) => p.repr()?.to_string(),
                    PolicyArg::Default => String::new(),
                };
                Err(PyValueError::new_err(format!("unknown policy {shown}: use 'random' or 'heuristic'")))
            }
        }
    }

    /// Writes `seat`'s information-state observation into a float32 buffer of obs_size values.
    fn observation_into(&self, py: Python<'_>, seat: i64, buf: &Bound<'_, PyAny>) -> PyResult<()> {
        let seat = self.check_seat(seat)?;
        let n = obs_size(self.inner.players());
        let buffer = PyBuffer::<f32>::get(buf)?;
        writable(&buffer, n, "observation_into")?;
        // SAFETY: `writable` checked a writable, C-contiguous float32 buffer of `n` items, and
        // the GIL is held, so nothing else writes it while this slice lives.
        let out = unsafe { std::slice::from_raw_parts_mut(buffer.buf_ptr().cast::<f32>(), n) };
        write_observation(&self.inner, seat, out);
        let _ = py;
        Ok(())
    }

    /// `seat`'s observation as a numpy float32 array (a list when numpy is not installed).
    fn observation<'py>(&self, py: Python<'py>, seat: i64) -> PyResult<Bound<'py, PyAny>> {
        let seat = self.check_seat(seat)?;
        let n = obs_size(self.inner.players());
        let mut tmp = vec![0f32; n];
        write_observation(&self.inner, seat, &mut tmp);
        match py.import("numpy") {
            Ok(np) => {
                let arr = np.call_method1("zeros", (n, "float32"))?;
                PyBuffer::<f32>::get(&arr)?.copy_from_slice(py, &tmp)?;
                Ok(arr)
            }
            Err(_) => Ok(PyList::new(py, tmp)?.into_any()),
        }
    }

    /// The start of hand `hand` of a game record (a dict, a conformance vector, or a path):
    /// its deal from the record, the totals of the hands before it. Later hands are dealt from
    /// the record's seed (its "seed" field, else "").
    #[classmethod]
    #[pyo3(signature = (record, hand = 0))]
    fn from_record(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        hand: i64,
    ) -> PyResult<Game> {
        let text: String = if record.is_instance_of::<PyDict>() {
            py.import("json")?.call_method1("dumps", (record,))?.extract()?
        } else {
            let path = py.import("os")?.call_method1("fspath", (record,))?;
            py.import("pathlib")?.getattr("Path")?.call1((path,))?.call_method0("read_text")?.extract()?
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("not a game record: {e}")))?;
        from_record_value(&value, hand).map(|inner| Game { inner })
    }

    /// A whole game consistent with one seat's `View` (hearts_core.view.View), the hidden cards
    /// placed as `world` (a hearts_client.sampler.World: `.hands` per seat, `.kitty`) says.
    /// Later hands are dealt from `seed`.
    #[classmethod]
    #[pyo3(signature = (view, world, seed = SeedText::of("")), text_signature = "($cls, view, world, seed='')")]
    fn from_view(
        _cls: &Bound<'_, pyo3::types::PyType>,
        view: &Bound<'_, PyAny>,
        world: &Bound<'_, PyAny>,
        seed: SeedText,
    ) -> PyResult<Game> {
        from_view(view, world, seed.0).map(|inner| Game { inner })
    }

    /// A game at the start of hand `hand_index` with the given cards (per seat a list of
    /// cards, and the kitty): without `passes` as dealt, at the start of passing; with
    /// `passes` (per seat its three cards, or none when unknown) the hands after passing, at
    /// the first lead. `history` (per earlier hand, its scores) becomes hand_scores_history();
    /// later hands are dealt from `seed`. Bad cards raise IllegalAction `BAD_DEAL`.
    #[classmethod]
    #[pyo3(
        signature = (players, hands, kitty, *, hand_index = 0, totals = None, seed = SeedText::of("0"), target_score = 150, max_hands = 200, first_dealer = 0, passes = None, history = None),
        text_signature = "($cls, players, hands, kitty, *, hand_index=0, totals=None, seed=0, target_score=150, max_hands=200, first_dealer=0, passes=None, history=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_hands(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        players: i64,
        hands: Vec<Vec<i64>>,
        kitty: Vec<i64>,
        hand_index: i64,
        totals: Option<Vec<i64>>,
        seed: SeedText,
        target_score: i64,
        max_hands: i64,
        first_dealer: i64,
        passes: Option<Vec<Vec<i64>>>,
        history: Option<Vec<Vec<i64>>>,
    ) -> PyResult<Game> {
        let rules = make_rules(players, target_score, max_hands, first_dealer)?;
        Core::from_hands(
            rules,
            &seed.0,
            hand_index,
            totals.as_deref(),
            history.as_deref(),
            &hands,
            &kitty,
            passes.as_deref(),
        )
        .map(|inner| Game { inner })
        .map_err(|e| illegal(py, &e))
    }

    fn __repr__(&self) -> String {
        format!(
            "<hearts_sim.Game players={} hand={} phase={} current_player={}>",
            self.inner.players(),
            self.inner.hand_index(),
            ["pass", "play", "moon", "over", "over"][self.phase() as usize],
            self.current_player()
        )
    }
}

impl Game {
    /// `seat` as an index, or IndexError (a negative seat too).
    fn check_seat(&self, seat: i64) -> PyResult<usize> {
        match usize::try_from(seat) {
            Ok(s) if s < self.inner.players() => Ok(s),
            _ => Err(PyIndexError::new_err(format!("seat must be 0..{}, not {seat}", self.inner.players() - 1))),
        }
    }
}

fn cards_of(value: Option<&serde_json::Value>, what: &str) -> PyResult<Vec<u8>> {
    let list =
        value.and_then(|v| v.as_array()).ok_or_else(|| PyValueError::new_err(format!("{what} is not a list")))?;
    list.iter()
        .map(|c| {
            c.as_str().and_then(cards::parse).ok_or_else(|| PyValueError::new_err(format!("{what}: bad card {c}")))
        })
        .collect()
}

fn from_record_value(value: &serde_json::Value, hand: i64) -> PyResult<Core> {
    let record = if value.get("hands").is_none() && value.get("record").is_some() { &value["record"] } else { value };
    let outcome =
        core_replay::replay(record).map_err(|e| PyValueError::new_err(format!("not a valid game record: {e}")))?;
    let done = outcome["hands"].as_array().map_or(0, Vec::len) as i64;
    let hands = record["hands"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if hand < 0 || hand as usize >= hands.len() {
        return Err(PyValueError::new_err(format!(
            "the record has {} hands; hand {hand} is not one of them",
            hands.len()
        )));
    }
    if hand > done {
        return Err(PyValueError::new_err(format!(
            "the record's replay stops at hand {done} ({}); hand {hand} cannot be reached",
            outcome["error"]
        )));
    }
    let players = record["players"].as_u64().unwrap_or(0) as i64;
    let first = hands[0].get("dealer").and_then(|d| d.as_i64()).unwrap_or(0);
    let target = record.get("target_score").and_then(|v| v.as_i64()).unwrap_or(150);
    let max_hands = record.get("max_hands").and_then(|v| v.as_i64()).unwrap_or(200);
    let rules = make_rules(players, target, max_hands, first)?;
    let n = rules.players;
    let mut totals = vec![0i64; n];
    let mut history = Vec::new();
    for h in outcome["hands"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().take(hand as usize) {
        let mut row = [0i32; MAX_PLAYERS];
        for (s, v) in h["scores"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate().take(n) {
            row[s] = v.as_i64().unwrap_or(0) as i32;
            totals[s] += v.as_i64().unwrap_or(0);
        }
        history.push(row);
    }
    let mut preset = Vec::with_capacity(hands.len());
    for (k, h) in hands.iter().enumerate() {
        let deal = h.get("deal").and_then(|d| d.as_array());
        let parsed = match deal {
            Some(d) => {
                let hs: PyResult<Vec<Hand>> = d
                    .iter()
                    .map(|x| cards_of(Some(x), &format!("hand {k} deal")).map(|c| Hand::from_cards(&c)))
                    .collect();
                let kitty = cards_of(
                    Some(h.get("kitty").unwrap_or(&serde_json::Value::Array(vec![]))),
                    &format!("hand {k} kitty"),
                );
                match (hs, kitty) {
                    (Ok(hs), Ok(kitty)) => Some(Deal { hands: hs, kitty: Hand::from_cards(&kitty) }),
                    _ => None,
                }
            }
            None => None,
        };
        preset.push(parsed);
    }
    let seed = match record.get("seed") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Core::resume(rules, &seed, preset, hand, &totals, history).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// What a game rebuilt from a View needs besides the world's hidden cards.
struct ViewStart {
    rules: Rules,
    passing: bool,
    seat: usize,
    passed: Vec<u8>,
    received: Vec<u8>,
    hand_index: i64,
    totals: Vec<i64>,
    history: Vec<[i32; MAX_PLAYERS]>,
    seed: String,
    /// The cards played this hand in order (the trick in progress included), and who played each.
    plays: Vec<(usize, u8)>,
}

fn view_start(view: &Bound<'_, PyAny>, seed: String) -> PyResult<ViewStart> {
    let rules_obj = view.getattr("rules")?;
    let rules = make_rules(
        rules_obj.getattr("players")?.extract()?,
        rules_obj.getattr("target_score")?.extract()?,
        rules_obj.getattr("max_hands")?.extract()?,
        rules_obj.getattr("first_dealer")?.extract()?,
    )?;
    let n = rules.players;
    let phase: String = view.getattr("phase")?.str()?.to_string();
    if !matches!(phase.as_str(), "passing" | "playing" | "moon_choice") {
        return Err(PyValueError::new_err(format!("no hand in progress (phase {phase})")));
    }
    let mut history = Vec::new();
    for summary in view.getattr("history")?.try_iter()? {
        let scores: Vec<i32> = summary?.getattr("scores")?.extract()?;
        let mut row = [0i32; MAX_PLAYERS];
        row[..n.min(scores.len())].copy_from_slice(&scores[..n.min(scores.len())]);
        history.push(row);
    }
    let mut tricks: Vec<Bound<'_, PyAny>> = view.getattr("tricks")?.try_iter()?.collect::<PyResult<_>>()?;
    let current = view.getattr("current")?;
    if !current.is_none() {
        tricks.push(current);
    }
    let mut plays = Vec::new();
    for trick in tricks {
        let leader: usize = trick.getattr("leader")?.extract()?;
        let cards: Vec<u8> = trick.getattr("cards")?.extract()?;
        plays.extend(cards.into_iter().enumerate().map(|(i, c)| ((leader + i) % n, c)));
    }
    Ok(ViewStart {
        rules,
        passing: phase == "passing",
        seat: view.getattr("seat")?.extract()?,
        passed: view.getattr("passed")?.extract()?,
        received: view.getattr("received")?.extract()?,
        hand_index: view.getattr("hand_index")?.extract()?,
        totals: view.getattr("totals")?.extract()?,
        history,
        seed,
        plays,
    })
}

/// The game a view and a world describe: in the passing phase the world's hands as dealt (the
/// view's own pass applied); later, the hands after the passes are the world's plus what each
/// seat has played, and the known cards are played again from the first trick.
fn game_from_view(start: &ViewStart, world: &[Hand], kitty: Hand) -> Result<Core, String> {
    let err = |e: CoreIllegal| format!("the view and the world disagree: {e}");
    let n = start.rules.players;
    if world.len() != n {
        return Err(format!("the world has {} hands for {n} seats", world.len()));
    }
    if start.passing {
        let mut preset = vec![None; start.hand_index as usize + 1];
        preset[start.hand_index as usize] = Some(Deal { hands: world.to_vec(), kitty });
        let mut game =
            Core::resume(start.rules, &start.seed, preset, start.hand_index, &start.totals, start.history.clone())
                .map_err(err)?;
        if !start.passed.is_empty() {
            game.apply_pass(start.seat, &start.passed).map_err(err)?;
        }
        return Ok(game);
    }
    let mut hands = world.to_vec();
    for &(s, c) in &start.plays {
        if c >= 52 || !hands[s].add(c) {
            return Err("the view and the world disagree: a card is held three times".into());
        }
    }
    let mut game = Core::resume_playing(
        start.rules,
        &start.seed,
        start.hand_index,
        &start.totals,
        start.history.clone(),
        &hands,
        kitty,
    )
    .map_err(err)?;
    // The seat's own pass, as it knows it: its observation shows what it passed and received.
    game.set_known_pass(start.seat, &start.passed, Hand::from_cards(&start.received))?;
    for &(_, c) in &start.plays {
        game.play(c).map_err(err)?;
    }
    Ok(game)
}

fn from_view(view: &Bound<'_, PyAny>, world: &Bound<'_, PyAny>, seed: String) -> PyResult<Core> {
    let start = view_start(view, seed)?;
    let hands: Vec<Hand> = world.getattr("hands")?.try_iter()?.map(|h| hand_of(&h?)).collect::<PyResult<_>>()?;
    let kitty = hand_of(&world.getattr("kitty")?)?;
    game_from_view(&start, &hands, kitty).map_err(PyValueError::new_err)
}

/// Many games stepped together, for reinforcement learning: arrays in, arrays out.
#[pyclass(module = "hearts_sim")]
pub struct VecGame {
    games: Vec<Core>,
    episodes: Vec<u64>,
    rules: Rules,
    seed: String,
    deal: DealMode,
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

impl VecGame {
    fn fresh(&self, i: usize, episode: u64) -> Core {
        let mut g = Core::with_deal(self.rules, &format!("{}/{i}/{episode}", self.seed), self.deal);
        g.rng = Rng::new(fnv1a(&self.seed) ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ episode.rotate_left(32));
        g
    }

    fn check_index(&self, i: usize) -> PyResult<()> {
        if i < self.games.len() {
            Ok(())
        } else {
            Err(PyIndexError::new_err(format!("game index must be 0..{}, not {i}", self.games.len() - 1)))
        }
    }
}

#[pymethods]
impl VecGame {
    /// `num_games` games of `players` seats; game i's deals come from seed "{seed}/{i}/{episode}"
    /// (`deal="fast"` by default: the simulator's own shuffle; "referee" for the referee's).
    #[new]
    #[pyo3(signature = (num_games, players, seed = None, *, target_score = 150, max_hands = 200, first_dealer = 0, deal = "fast"))]
    fn new(
        num_games: usize,
        players: i64,
        seed: Option<&Bound<'_, PyAny>>,
        target_score: i64,
        max_hands: i64,
        first_dealer: i64,
        deal: &str,
    ) -> PyResult<VecGame> {
        let deal = deal_mode(deal)?;
        if num_games == 0 {
            return Err(PyValueError::new_err("num_games must be at least 1"));
        }
        let rules = make_rules(players, target_score, max_hands, first_dealer)?;
        let seed = match seed {
            Some(s) => seed_text(s)?,
            None => "0".into(),
        };
        let mut v = VecGame { games: Vec::new(), episodes: vec![0; num_games], rules, seed, deal };
        v.games = (0..num_games).map(|i| v.fresh(i, 0)).collect();
        Ok(v)
    }

    #[getter]
    fn num_games(&self) -> usize {
        self.games.len()
    }
    #[getter]
    fn players(&self) -> usize {
        self.rules.players
    }
    #[getter]
    fn obs_size(&self) -> usize {
        obs_size(self.rules.players)
    }

    fn __len__(&self) -> usize {
        self.games.len()
    }

    /// Every game back to episode 0.
    fn reset(&mut self) {
        self.episodes.fill(0);
        self.games = (0..self.games.len()).map(|i| self.fresh(i, 0)).collect();
    }

    /// A copy of game `i` as a Game.
    fn game(&self, i: usize) -> PyResult<Game> {
        self.check_index(i)?;
        Ok(Game { inner: self.games[i].clone() })
    }

    /// The seat to act in each game, into an int64/int32 buffer of N (or as a list).
    #[pyo3(signature = (out = None))]
    fn current_players(&self, py: Python<'_>, out: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
        let seats: Vec<i64> = self.games.iter().map(|g| g.current_player().map_or(-1, |s| s as i64)).collect();
        let Some(out) = out else {
            return Ok(Some(seats));
        };
        if let Ok(b) = PyBuffer::<i64>::get(out) {
            writable(&b, seats.len(), "current_players")?;
            b.copy_from_slice(py, &seats)?;
        } else {
            let b = PyBuffer::<i32>::get(out)?;
            writable(&b, seats.len(), "current_players")?;
            let s32: Vec<i32> = seats.iter().map(|&s| s as i32).collect();
            b.copy_from_slice(py, &s32)?;
        }
        Ok(None)
    }

    /// The legal actions of every game into a uint8/bool buffer of N x 54.
    fn legal_masks(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = PyBuffer::<Byte>::get(out)?;
        writable(&b, self.games.len() * NUM_ACTIONS, "legal_masks")?;
        let cells = b.as_mut_slice(py).ok_or_else(|| PyValueError::new_err("legal_masks: buffer not writable"))?;
        for (g, row) in self.games.iter().zip(cells.chunks(NUM_ACTIONS)) {
            let mask = g.legal_mask();
            for (a, cell) in row.iter().enumerate() {
                cell.set(Byte((mask >> a & 1) as u8));
            }
        }
        Ok(())
    }

    /// Applies one action per game (int64/int32 buffer of N). Every action is checked before
    /// any is applied. `rewards` (float32 N x players) receives minus what a hand ended by
    /// this step added to each total (0 elsewhere); `dones` (uint8/bool N) is 1 where the game
    /// ended, and that game starts its next episode at once.
    #[pyo3(signature = (actions, rewards = None, dones = None))]
    fn step(
        &mut self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
        rewards: Option<&Bound<'_, PyAny>>,
        dones: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let n_games = self.games.len();
        let acts: Vec<i64> = if let Ok(b) = PyBuffer::<i64>::get(actions) {
            b.to_vec(py)?
        } else if let Ok(b) = PyBuffer::<i32>::get(actions) {
            b.to_vec(py)?.into_iter().map(i64::from).collect()
        } else {
            actions.extract()?
        };
        if acts.len() != n_games {
            return Err(PyValueError::new_err(format!("step: {} actions for {n_games} games", acts.len())));
        }
        for (i, (&a, g)) in acts.iter().zip(&self.games).enumerate() {
            let a = check_action(a)?;
            if g.legal_mask() >> a & 1 == 0 {
                let mut probe = g.clone();
                if let Err(e) = probe.apply_action(a) {
                    let err = illegal(py, &e);
                    let msg = format!("game {i}: {e}");
                    let v = err.value(py);
                    let _ = v.setattr("game", i);
                    let _ = v.setattr("args", (msg,));
                    return Err(err);
                }
            }
        }
        let players = self.rules.players;
        let mut rew = vec![0f32; n_games * players];
        let mut done = vec![0u8; n_games];
        for i in 0..n_games {
            let before = self.games[i].hands_done();
            self.games[i].apply_legal(acts[i] as u8);
            if let Some(end) = self.games[i].last_hand().filter(|_| self.games[i].hands_done() > before) {
                let scores = end.scores;
                for s in 0..players {
                    rew[i * players + s] = -(scores[s] as f32);
                }
            }
            if self.games[i].is_over() {
                done[i] = 1;
                self.episodes[i] += 1;
                self.games[i] = self.fresh(i, self.episodes[i]);
            }
        }
        if let Some(r) = rewards {
            let b = PyBuffer::<f32>::get(r)?;
            writable(&b, rew.len(), "step rewards")?;
            b.copy_from_slice(py, &rew)?;
        }
        if let Some(d) = dones {
            let b = PyBuffer::<Byte>::get(d)?;
            writable(&b, n_games, "step dones")?;
            let cells = b.as_mut_slice(py).ok_or_else(|| PyValueError::new_err("step dones: buffer not writable"))?;
            for (cell, &x) in cells.iter().zip(&done) {
                cell.set(Byte(x));
            }
        }
        Ok(())
    }

    /// Every game's current player's observation into a float32 buffer of N x obs_size.
    fn observations(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let size = obs_size(self.rules.players);
        let b = PyBuffer::<f32>::get(out)?;
        writable(&b, self.games.len() * size, "observations")?;
        let mut tmp = vec![0f32; self.games.len() * size];
        let games = &self.games;
        py.allow_threads(|| {
            for (g, row) in games.iter().zip(tmp.chunks_mut(size)) {
                write_observation(g, g.current_player().unwrap_or(0), row);
            }
        });
        b.copy_from_slice(py, &tmp)
    }

    /// Steps every game `n_steps` times with uniformly random legal actions, in the core and
    /// without the GIL (finished games start their next episode). Returns the hands completed.
    fn step_random(&mut self, py: Python<'_>, n_steps: u64) -> u64 {
        let seed = self.seed.clone();
        let rules = self.rules;
        let mode = self.deal;
        let games = &mut self.games;
        let episodes = &mut self.episodes;
        py.allow_threads(|| {
            let mut hands = 0;
            for (i, (g, ep)) in games.iter_mut().zip(episodes.iter_mut()).enumerate() {
                let mut left = n_steps;
                while left > 0 {
                    let before = g.hands_done();
                    let done = policy::random_steps(g, left, false);
                    hands += (g.hands_done() - before) as u64;
                    left -= done;
                    if g.is_over() {
                        *ep += 1;
                        let mut fresh = Core::with_deal(rules, &format!("{seed}/{i}/{ep}"), mode);
                        fresh.rng = g.rng;
                        *g = fresh;
                    } else if done == 0 {
                        break;
                    }
                }
            }
            hands
        })
    }
}

fn view_facts(view: &Bound<'_, PyAny>) -> PyResult<ViewFacts> {
    let phase: String = view.getattr("phase")?.str()?.to_string();
    if !matches!(phase.as_str(), "passing" | "playing" | "moon_choice") {
        return Err(PyValueError::new_err(format!("no hand in progress (phase {phase})")));
    }
    let mut tricks = Vec::new();
    let current = view.getattr("current")?;
    let all = view.getattr("tricks")?;
    let mut items: Vec<Bound<'_, PyAny>> = all.try_iter()?.collect::<PyResult<_>>()?;
    if !current.is_none() {
        items.push(current);
    }
    for t in items {
        tricks.push(TrickSeen {
            leader: t.getattr("leader")?.extract()?,
            cards: t.getattr("cards")?.extract()?,
            complete: t.getattr("complete")?.extract()?,
        });
    }
    Ok(ViewFacts {
        players: view.getattr("rules")?.getattr("players")?.extract()?,
        seat: view.getattr("seat")?.extract()?,
        passing: phase == "passing",
        hand: hand_of(&view.getattr("hand")?)?,
        passed: view.getattr("passed")?.extract()?,
        pass_left: view.getattr("pass_direction")?.str()?.to_str()? == "left",
        hand_sizes: view.getattr("hand_sizes")?.extract()?,
        kitty_size: view.getattr("kitty_size")?.extract()?,
        tricks,
    })
}

/// `n` worlds consistent with `view` (a hearts_core View), as hearts_client.sampler.World
/// objects: exactly `[WorldSampler(view).sample(rng) for _ in range(n)]` with
/// `rng = random.Random(seed)`, drawn in Rust without the GIL.
#[pyfunction]
#[pyo3(signature = (view, n, seed = None))]
fn sample_worlds<'py>(
    py: Python<'py>,
    view: &Bound<'py, PyAny>,
    n: usize,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let facts = view_facts(view)?;
    let sampler = WorldSampler::new(&facts).map_err(PyValueError::new_err)?;
    let mut rng = python_random(seed)?;
    let worlds = py.allow_threads(|| (0..n).map(|_| sampler.sample(&mut rng)).collect::<Result<Vec<_>, String>>());
    let worlds = worlds.map_err(PyValueError::new_err)?;
    let world_cls = py.import("hearts_client.sampler")?.getattr("World")?;
    let from_masks = py.import("hearts_core.cards")?.getattr("CardSet")?.getattr("from_masks")?;
    let out = PyList::empty(py);
    for (hands, kitty) in worlds {
        let hs: Vec<Bound<'_, PyAny>> =
            hands.iter().map(|h| from_masks.call1((h.once, h.twice))).collect::<PyResult<_>>()?;
        let kw = PyDict::new(py);
        kw.set_item("hands", PyTuple::new(py, hs)?)?;
        kw.set_item("kitty", from_masks.call1((kitty.once, kitty.twice))?)?;
        out.append(world_cls.call((), Some(&kw))?)?;
    }
    Ok(out)
}

/// `n` whole games consistent with `view`: `[Game.from_view(view, w, game_seed) for w in
/// sample_worlds(view, n, seed)]`, built in Rust without the GIL (no World objects made).
#[pyfunction]
#[pyo3(signature = (view, n, seed = None, game_seed = None))]
fn sample_games(
    py: Python<'_>,
    view: &Bound<'_, PyAny>,
    n: usize,
    seed: Option<&Bound<'_, PyAny>>,
    game_seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Game>> {
    let facts = view_facts(view)?;
    let start = view_start(view, game_seed.map(seed_text).transpose()?.unwrap_or_default())?;
    let sampler = WorldSampler::new(&facts).map_err(PyValueError::new_err)?;
    let mut rng = python_random(seed)?;
    let games = py.allow_threads(|| {
        (0..n)
            .map(|_| {
                let (hands, kitty) = sampler.sample(&mut rng)?;
                game_from_view(&start, &hands, kitty)
            })
            .collect::<Result<Vec<_>, String>>()
    });
    Ok(games.map_err(PyValueError::new_err)?.into_iter().map(|inner| Game { inner }).collect())
}

fn python_random(seed: Option<&Bound<'_, PyAny>>) -> PyResult<PyRandom> {
    Ok(match seed {
        None => PyRandom::from_int(0),
        Some(seed) => match seed.downcast::<PyString>() {
            Ok(s) => PyRandom::from_text(s.to_str()?),
            Err(_) => {
                PyRandom::from_int(seed.extract().map_err(|_| PyTypeError::new_err("seed must be an int or a str"))?)
            }
        },
    })
}

/// The conformance outcome of a game record (a dict), as `hearts_core.replay.replay`.
#[pyfunction]
fn replay<'py>(py: Python<'py>, record: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let json = py.import("json")?;
    let text: String = json.call_method1("dumps", (record,))?.extract()?;
    let out = replay_json(&text)?;
    json.call_method1("loads", (out,))
}

/// The outcome line `hearts replay` prints for a record given as JSON text (compact JSON).
#[pyfunction]
fn replay_json(text: &str) -> PyResult<String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("not JSON: {e}")))?;
    let record = if value.get("hands").is_none() && value.get("record").is_some() { &value["record"] } else { &value };
    let outcome =
        core_replay::replay(record).map_err(|e| PyValueError::new_err(format!("not a valid game record: {e}")))?;
    Ok(outcome.to_string())
}

/// The referee's deal of hand `hand_index` for `seed`: per seat the sorted cards, and the kitty.
#[pyfunction]
fn deal_hand(players: i64, seed: &Bound<'_, PyAny>, hand_index: u32) -> PyResult<(Vec<Vec<u16>>, Vec<u16>)> {
    make_rules(players, 150, 200, 0)?;
    let (hands, kitty) = hearts_sim_core::deal::deal_hand(players as usize, &seed_text(seed)?, hand_index);
    Ok((hands.iter().map(|h| ints(h.cards())).collect(), ints(kitty.cards())))
}

/// The observation length for `players` seats.
#[pyfunction]
fn obs_size_of(players: usize) -> usize {
    obs_size(players)
}

/// Plays `hands` whole random hands of `players` seats inside the core, without the GIL
/// (the benchmark's core loop). Returns the number of cards played.
#[pyfunction]
#[pyo3(signature = (players, hands, seed = 0, deal = "fast"))]
fn play_random_hands(py: Python<'_>, players: i64, hands: u64, seed: u64, deal: &str) -> PyResult<u64> {
    let rules = make_rules(players, 1 << 40, 1 << 40, 0)?;
    let mode = deal_mode(deal)?;
    Ok(py.allow_threads(|| {
        let mut game = Core::with_deal(rules, &format!("bench/{seed}"), mode);
        game.rng = Rng::new(seed);
        let mut cards_played = 0;
        for _ in 0..hands {
            let start = game.plays_in_hand();
            policy::play_out(&mut game, Named::Random, true);
            cards_played += (rules.players * rules.hand_size() - start) as u64;
        }
        cards_played
    }))
}

/// Raises a Rust panic (tests check it becomes a Python exception, not an abort).
#[pyfunction]
fn _panic_for_test() {
    panic!("hearts_sim: a deliberate panic for the tests");
}

#[pymodule]
fn hearts_sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Game>()?;
    m.add_class::<VecGame>()?;
    m.add("IllegalAction", py.get_type::<IllegalAction>())?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_json, m)?)?;
    m.add_function(wrap_pyfunction!(deal_hand, m)?)?;
    m.add_function(wrap_pyfunction!(sample_worlds, m)?)?;
    m.add_function(wrap_pyfunction!(sample_games, m)?)?;
    m.add_function(wrap_pyfunction!(play_random_hands, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    let f = wrap_pyfunction!(obs_size_of, m)?;
    m.add("obs_size", &f)?;
    m.add("OBS_SIZE", &f)?;
    m.add("NUM_ACTIONS", NUM_ACTIONS)?;
    m.add("MOON_SELF_MINUS_26", hearts_sim_core::MOON_SELF_MINUS_26)?;
    m.add("MOON_OTHERS_PLUS_26", hearts_sim_core::MOON_OTHERS_PLUS_26)?;
    m.add("PASS", 0)?;
    m.add("PLAY", 1)?;
    m.add("MOON", 2)?;
    m.add("OVER", 3)?;
    m.add("PHASE_NAMES", PyTuple::new(py, ["pass", "play", "moon", "over"])?)?;
    m.add("MIN_PLAYERS", 6)?;
    m.add("MAX_PLAYERS", 11)?;
    m.add("BUILD_ID", BUILD_ID)?;
    m.add("BACKEND", "native")?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
