//! Every conformance vector, every recorded deal: the core against `hearts_core`'s answers.

use std::fs;
use std::path::PathBuf;

use hearts_sim_core::cards;
use hearts_sim_core::deal::deal_hand;
use hearts_sim_core::replay::replay;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

#[test]
fn every_vector_gives_its_expected_outcome() {
    let dir = repo().join("tests/conformance/vectors");
    let mut count = 0;
    let mut illegal = 0;
    for entry in fs::read_dir(&dir).expect("tests/conformance/vectors") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let vector: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let got = replay(&vector["record"]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(got, vector["expected"], "{}", path.display());
        if !vector["expected"]["error"].is_null() {
            illegal += 1;
        }
        count += 1;
    }
    assert!(count >= 59, "only {count} vectors found in {}", dir.display());
    assert!(illegal >= 30, "only {illegal} illegal vectors");
}

/// `tests/data/deals.json` holds `hearts_core.deal.deal_hand` for 6..11 players, several
/// seeds and hands (written by the Python script in clients/sim/README.md).
#[test]
fn deals_match_the_referee() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/deals.json");
    let cases: Vec<Value> = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 100);
    for case in cases {
        let players = case["players"].as_u64().unwrap() as usize;
        let seed = case["seed"].as_str().unwrap();
        let k = case["hand"].as_u64().unwrap() as u32;
        let (hands, kitty) = deal_hand(players, seed, k);
        let codes = |cs: Vec<u8>| -> Value { cs.into_iter().map(cards::code).collect::<Vec<_>>().into() };
        let got: Vec<Value> = hands.iter().map(|h| codes(h.cards())).collect();
        assert_eq!(Value::from(got), case["deal"], "{players} players, seed {seed:?}, hand {k}");
        assert_eq!(codes(kitty.cards()), case["kitty"], "kitty: {players} players, seed {seed:?}, hand {k}");
    }
}
