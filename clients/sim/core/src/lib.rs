//! The Cancellation Hearts rules engine for simulation.
//!
//! The referee's engine (`hearts_core`, Python) is the oracle: this crate plays the same rules
//! (`docs/RULES.md`), deals the same cards from the same seed and rejects illegal actions with
//! the same conformance codes, on plain bit masks and without record-grade bookkeeping, so that
//! bots can roll games out millions of times. [`Game`] is one game; [`replay`] replays a game
//! record into its conformance outcome; [`policy`] holds the random and heuristic policies.

pub mod cards;
pub mod deal;
pub mod game;
pub mod obs;
pub mod policy;
pub mod pyrandom;
pub mod replay;
pub mod rng;
pub mod sampler;

pub use game::{Action, DealMode, Game, Illegal, Phase, Rules, MOON_OTHERS_PLUS_26, MOON_SELF_MINUS_26, NUM_ACTIONS};
