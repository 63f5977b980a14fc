//! Replaying a game record into its conformance outcome, as `hearts_core.replay.replay`.
//!
//! The checks run in the order the conformance README fixes (rotation, deal, passes seat by
//! seat with the count before the cards, then the plays), and an illegal record gives an
//! outcome whose `error` names the first illegal thing. A record too malformed for the Python
//! replay to read at all (it would raise a `TypeError` or `KeyError`) is an `Err`.

use serde_json::{json, Map, Value};

use crate::cards;
use crate::game::{Game, Illegal, IllegalAction, Phase, Rules};

const DEFAULT_TARGET_SCORE: i64 = 150;
const DEFAULT_MAX_HANDS: i64 = 200;

fn err_json(e: &IllegalAction) -> Value {
    let mut out = Map::new();
    out.insert("code".into(), json!(e.code()));
    for (key, value) in [("hand", e.hand), ("play", e.play), ("seat", e.seat)] {
        if let Some(v) = value {
            out.insert(key.into(), json!(v));
        }
    }
    Value::Object(out)
}

fn illegal(
    kind: Illegal,
    message: impl Into<String>,
    hand: Option<i64>,
    play: Option<i64>,
    seat: Option<i64>,
) -> IllegalAction {
    IllegalAction::new(kind, message).at(hand, play, seat)
}

/// Python's `v == k` for a JSON value and an int.
fn py_eq_int(v: Option<&Value>, k: i64) -> bool {
    match v {
        Some(Value::Number(n)) => n.as_i64().map_or_else(|| n.as_f64() == Some(k as f64), |i| i == k),
        Some(Value::Bool(b)) => i64::from(*b) == k,
        _ => false,
    }
}

/// Python's `int(value)` for the rules' numbers.
fn py_int(v: &Value, key: &str) -> Result<i64, String> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f.trunc() as i64))
            .ok_or_else(|| format!("{key} is not a number")),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::String(s) => s.trim().parse::<i64>().map_err(|_| format!("invalid literal for int(): {s:?}")),
        _ => Err(format!("{key} must be a number")),
    }
}

fn parse_cards(codes: Option<&Value>, kind: Illegal, hand: i64, seat: Option<i64>) -> Result<Vec<u8>, IllegalAction> {
    let Some(Value::Array(items)) = codes else {
        return Err(illegal(kind, "expected a list of card codes", Some(hand), None, seat));
    };
    items
        .iter()
        .map(|c| {
            c.as_str()
                .and_then(cards::parse)
                .ok_or_else(|| illegal(kind, format!("unknown card code {c}"), Some(hand), None, seat))
        })
        .collect()
}

struct Replay {
    hands_out: Vec<Value>,
    tricks: Vec<Value>,
}

impl Replay {
    /// Called once a trick has completed, so there is a last trick.
    fn note_trick(&mut self, game: &Game) {
        let Some(t) = game.last_trick() else { return };
        let n = game.players();
        let codes: Vec<String> = t.cards[..n].iter().map(|&c| cards::code(c)).collect();
        let winner = if t.winner >= 0 { json!(t.winner) } else { Value::Null };
        self.tricks.push(json!({"leader": t.leader, "cards": codes, "winner": winner}));
    }

    /// Called once a hand has finished, so there is a last hand.
    fn note_hand(&mut self, game: &Game) {
        let Some(h) = game.last_hand() else { return };
        let n = game.players();
        let uncollected: Vec<String> = h.uncollected.cards().into_iter().map(cards::code).collect();
        let moon = if h.moon >= 0 { json!(h.moon) } else { Value::Null };
        self.hands_out.push(json!({
            "tricks": std::mem::take(&mut self.tricks),
            "points": &h.points[..n],
            "scores": &h.scores[..n],
            "moon": moon,
            "uncollected": uncollected,
        }));
    }
}

fn outcome(game: &Game, hands: Vec<Value>, error: Option<&IllegalAction>) -> Value {
    let over = error.is_none() && game.is_over();
    json!({
        "hands": hands,
        "totals": game.totals(),
        "game_over": over,
        "winners": if over { game.winners() } else { Vec::new() },
        "error": error.map_or(Value::Null, err_json),
    })
}

/// The rules of a record (`hearts_core.replay.rules_of`); `Ok(Err(outcome))` is an early
/// conformance outcome (bad player count or first dealer).
fn rules_of(record: &Map<String, Value>) -> Result<Result<Rules, Value>, String> {
    let players = match record.get("players") {
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.as_i64().unwrap_or(i64::MAX),
        other => {
            let _ = other;
            return Ok(Err(json!({"hands": [], "totals": [], "game_over": false, "winners": [],
                "error": {"code": "BAD_PLAYER_COUNT"}})));
        }
    };
    let first = match record.get("hands") {
        Some(Value::Array(hands)) if !hands.is_empty() => match &hands[0] {
            Value::Object(h) => h.get("dealer").cloned().unwrap_or(json!(0)),
            _ => json!(0),
        },
        None | Some(Value::Null) | Some(Value::Array(_)) => json!(0),
        Some(Value::Bool(false)) => json!(0),
        Some(Value::String(s)) if s.is_empty() => json!(0),
        Some(Value::String(_)) => json!(0),
        Some(_) => return Err("hands must be a list".into()),
    };
    if !(6..=11).contains(&players) {
        return Ok(Err(json!({"hands": [], "totals": [], "game_over": false, "winners": [],
            "error": {"code": "BAD_PLAYER_COUNT"}})));
    }
    let first = match first {
        Value::Number(n) if n.is_i64() => n.as_i64().unwrap_or(-1),
        Value::Bool(b) => i64::from(b),
        _ => -1,
    };
    if !(0..players).contains(&first) {
        return Ok(Err(json!({"hands": [], "totals": vec![0; players as usize], "game_over": false,
            "winners": [], "error": {"code": "BAD_ROTATION", "hand": 0}})));
    }
    let target = record.get("target_score").map_or(Ok(DEFAULT_TARGET_SCORE), |v| py_int(v, "target_score"))?;
    let max_hands = record.get("max_hands").map_or(Ok(DEFAULT_MAX_HANDS), |v| py_int(v, "max_hands"))?;
    Rules::new(players as usize, target, max_hands, first as usize).map(Ok)
}

/// Replays `record` (a parsed game record or a vector's `record`) into its outcome.
///
/// Errors: the record cannot be read at all (the message says why).
pub fn replay(record: &Value) -> Result<Value, String> {
    let Value::Object(record) = record else {
        return Err("a game record must be a JSON object".into());
    };
    let rules = match rules_of(record)? {
        Ok(rules) => rules,
        Err(early) => return Ok(early),
    };
    let hands = match record.get("hands") {
        Some(Value::Array(hands)) => hands,
        _ => return Err("'hands' must be a list".into()),
    };
    let mut game = Game::manual(rules);
    let mut rep = Replay { hands_out: Vec::new(), tricks: Vec::new() };
    match drive(&mut game, &rules, hands, &mut rep) {
        Ok(()) => Ok(outcome(&game, rep.hands_out, None)),
        Err(e) => Ok(outcome(&game, rep.hands_out, Some(&e))),
    }
}

fn drive(game: &mut Game, rules: &Rules, hands: &[Value], rep: &mut Replay) -> Result<(), IllegalAction> {
    let n = rules.players;
    loop {
        let index = match game.phase() {
            Phase::Deal => game.hand_index() + 1,
            Phase::Over => break,
            _ => game.hand_index(),
        };
        if game.phase() == Phase::Deal && index as usize >= hands.len() {
            return Ok(()); // the record ends here
        }
        let Value::Object(hand) = &hands[index as usize] else {
            return Err(illegal(Illegal::BadDeal, "a hand must be a JSON object", Some(index), None, None));
        };
        match game.phase() {
            Phase::Deal => {
                let left = index % 2 == 0;
                let direction = if left { "left" } else { "right" };
                let dealer = rules.dealer(index) as i64;
                if !py_eq_int(hand.get("dealer"), dealer)
                    || hand.get("pass_direction").and_then(Value::as_str) != Some(direction)
                {
                    return Err(illegal(
                        Illegal::BadRotation,
                        format!("hand {index} must be dealt by seat {dealer} and pass {direction}"),
                        Some(index),
                        None,
                        None,
                    ));
                }
                let Some(Value::Array(deal)) = hand.get("deal") else {
                    return Err(illegal(Illegal::BadDeal, "'deal' must be a list of hands", Some(index), None, None));
                };
                let empty = Value::Array(Vec::new());
                let kitty = parse_cards(Some(hand.get("kitty").unwrap_or(&empty)), Illegal::BadDeal, index, None)?;
                let cards_: Vec<Vec<u8>> = deal
                    .iter()
                    .map(|h| parse_cards(Some(h), Illegal::BadDeal, index, None))
                    .collect::<Result<_, _>>()?;
                game.start_hand_cards(&cards_, &kitty)?;
            }
            Phase::Pass => {
                let passed = match hand.get("passes") {
                    Some(Value::Array(p)) if p.len() == n => p,
                    _ => {
                        return Err(illegal(
                            Illegal::BadPass,
                            format!("expected a pass from each of the {n} seats"),
                            Some(index),
                            None,
                            None,
                        ))
                    }
                };
                for (seat, codes) in passed.iter().enumerate() {
                    let s = Some(seat as i64);
                    let Value::Array(list) = codes else {
                        return Err(illegal(
                            Illegal::BadPass,
                            format!("seat {seat}'s pass is not a list"),
                            Some(index),
                            None,
                            None,
                        ));
                    };
                    if list.len() != 3 {
                        return Err(illegal(
                            Illegal::BadPassCount,
                            format!("seat {seat} passed {} cards", list.len()),
                            Some(index),
                            None,
                            s,
                        ));
                    }
                    let cards_ = parse_cards(Some(codes), Illegal::PassNotInHand, index, s)?;
                    game.apply_pass(seat, &cards_)?;
                }
            }
            Phase::Play => {
                let seat = game.current_player().unwrap_or(0) as i64;
                let Some(Value::Array(plays)) = hand.get("plays") else {
                    return Err(illegal(Illegal::Incomplete, "'plays' must be a list", Some(index), Some(0), None));
                };
                let i = game.plays_in_hand();
                if i >= plays.len() {
                    return Err(illegal(
                        Illegal::Incomplete,
                        format!("the hand stops after {} plays", plays.len()),
                        Some(index),
                        Some(plays.len() as i64),
                        None,
                    ));
                }
                let Some(card) = plays[i].as_str().and_then(cards::parse) else {
                    return Err(illegal(
                        Illegal::NotInHand,
                        format!("unknown card code {}", plays[i]),
                        Some(index),
                        Some(i as i64),
                        Some(seat),
                    ));
                };
                let total = n * rules.hand_size();
                if i == total - 1 && plays.len() > total {
                    game.check_play(card)?;
                    return Err(illegal(
                        Illegal::ExtraPlays,
                        format!("the hand ends after {total} plays"),
                        Some(index),
                        Some(total as i64),
                        None,
                    ));
                }
                let done = game.hands_done();
                game.play(card)?;
                if game.trick_cards().is_empty() {
                    rep.note_trick(game);
                }
                if game.hands_done() > done {
                    rep.note_hand(game);
                }
            }
            Phase::Moon => {
                let choice = hand.get("moon_choice").map_or(Some("self_minus_26"), Value::as_str);
                let others = match choice {
                    Some("self_minus_26") => false,
                    Some("others_plus_26") => true,
                    _ => {
                        return Err(illegal(
                            Illegal::BadMoonChoice,
                            "moon choice must be one of ['self_minus_26', 'others_plus_26']",
                            Some(index),
                            None,
                            None,
                        ))
                    }
                };
                game.choose_moon(others)?;
                rep.note_hand(game);
            }
            Phase::Over => break,
        }
    }
    if (game.hands_done() as usize) < hands.len() {
        return Err(illegal(
            Illegal::GameAlreadyOver,
            "the game was over before this hand",
            Some(game.hands_done()),
            None,
            None,
        ));
    }
    Ok(())
}
