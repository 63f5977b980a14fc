//! A hand's facts read back (`tricks`, `uncollected`, the last trick and hand) and games built
//! from given cards (`Game::from_hands`): against the game's own play, at every card.

use hearts_sim_core::cards::Hand;
use hearts_sim_core::deal::deal_hand;
use hearts_sim_core::game::{trick_winner, Game, Illegal, Phase, Rules};
use hearts_sim_core::policy::random_action;
use hearts_sim_core::rng::Rng;

fn lists(hands: &[Hand]) -> Vec<Vec<i64>> {
    hands.iter().map(|h| h.cards().into_iter().map(i64::from).collect()).collect()
}

fn list(hand: Hand) -> Vec<i64> {
    hand.cards().into_iter().map(i64::from).collect()
}

/// Random games at 6..11 seats: after every action the completed tricks are the ones played
/// (each new one equal to `last_trick`), and every point of the hand is collected or waiting.
#[test]
fn tricks_and_uncollected_follow_the_play() {
    let mut rng = Rng::new(35);
    for index in 0..60u32 {
        let players = 6 + (index % 6) as usize;
        let rules = Rules::new(players, 150, 2, 0).unwrap();
        let mut game = Game::new(rules, &format!("hands-{index}"));
        assert!(game.last_trick().is_none() && game.last_hand().is_none());
        while !game.is_over() {
            let action = random_action(&game, &mut rng).unwrap();
            let (before, hands_before) = (game.trick_index(), game.hands_done());
            game.apply_action(action).unwrap();
            if game.hands_done() > hands_before {
                let end = game.last_hand().expect("a hand just ended");
                if !game.is_over() {
                    assert_eq!(game.tricks().len(), 0, "a new hand has no trick yet");
                    continue;
                }
                assert_eq!(game.uncollected(), end.uncollected, "at game over the last hand's stay");
            }
            let tricks = game.tricks();
            assert_eq!(tricks.len(), game.trick_index());
            if game.trick_index() > before {
                let last = game.last_trick().expect("a trick just completed");
                assert_eq!(tricks.last(), Some(last));
            }
            for t in &tricks {
                let cards = &t.cards[..players];
                let winner = trick_winner(cards).map_or(-1, |i| ((t.leader as usize + i) % players) as i8);
                assert_eq!(t.winner, winner);
            }
            let collected: i32 = game.points().iter().sum();
            let played: i32 =
                tricks.iter().flat_map(|t| t.cards[..players].to_vec()).map(hearts_sim_core::cards::points).sum();
            assert_eq!(collected + game.uncollected().points(), played + game.kitty_points());
        }
    }
}

/// A game from the hands the seed deals is the game the seed deals, action for action.
#[test]
fn from_hands_is_the_dealt_game() {
    let mut rng = Rng::new(36);
    for index in 0..30u32 {
        let players = 6 + (index % 6) as usize;
        let rules = Rules::new(players, 150, 3, (index as usize) % players).unwrap();
        let seed = format!("fh-{index}");
        let mut dealt = Game::new(rules, &seed);
        let (hands, kitty) = deal_hand(players, &seed, 0);
        let mut built = Game::from_hands(rules, &seed, 0, None, None, &lists(&hands), &list(kitty), None).unwrap();
        while !dealt.is_over() {
            assert_eq!(built.legal_mask(), dealt.legal_mask());
            assert_eq!(built.current_player(), dealt.current_player());
            let action = random_action(&dealt, &mut rng).unwrap();
            dealt.apply_action(action).unwrap();
            built.apply_action(action).unwrap();
        }
        assert_eq!(built.totals(), dealt.totals());
        assert_eq!(built.history(), dealt.history());
    }
}

/// With the passes: the hands after them, at the first lead, each seat's pass and what it
/// received as given; later hands come from the seed, the totals and history carry on.
#[test]
fn from_hands_after_the_passes() {
    let rules = Rules::new(8, 150, 10, 3).unwrap();
    let (hands, kitty) = deal_hand(8, "after", 4);
    let hands = lists(&hands);
    let passes: Vec<Vec<i64>> = (0..8).map(|s| if s == 2 { vec![] } else { hands[s][..3].to_vec() }).collect();
    let totals = [5, 0, 12, 7, 30, 1, 0, 9];
    let history = vec![vec![1i64; 8]; 4];
    let game = Game::from_hands(rules, "after", 4, Some(&totals), Some(&history), &hands, &list(kitty), Some(&passes))
        .unwrap();
    assert_eq!(game.phase(), Phase::Play);
    assert_eq!(game.hand_index(), 4);
    assert_eq!(game.current_player(), Some(game.first_leader()));
    assert_eq!(game.totals(), &totals);
    assert_eq!(game.history().len(), 4);
    assert!(game.last_trick().is_none() && game.last_hand().is_none());
    // Hand 4 passes left: seat s receives seat s - 1's pass.
    assert_eq!(game.passed_cards(0), &[hands[0][0] as u8, hands[0][1] as u8, hands[0][2] as u8]);
    assert_eq!(list(game.received(1)), passes[0]);
    assert!(game.passed_cards(2).is_empty() && game.received(3).is_empty());
}

#[test]
fn from_hands_refuses_a_bad_deal() {
    let rules = Rules::new(7, 150, 200, 0).unwrap();
    let (hands, kitty) = deal_hand(7, "bad", 0);
    let (hands, kitty) = (lists(&hands), list(kitty));
    let mut short = hands.clone();
    short[0].pop();
    let mut third = hands.clone();
    third[0][1] = third[0][0];
    third[0][2] = third[0][0];
    let mut foreign = hands.clone();
    foreign[0][0] = 52;
    let two = vec![vec![1, 2]; 7];
    let wrong_history = vec![vec![0; 6]];
    let cases: Vec<(&str, Result<Game, _>)> = vec![
        ("totals", Game::from_hands(rules, "", 0, Some(&[0; 6]), None, &hands, &kitty, None)),
        ("hand index", Game::from_hands(rules, "", -1, None, None, &hands, &kitty, None)),
        ("short", Game::from_hands(rules, "", 0, None, None, &short, &kitty, None)),
        ("kitty", Game::from_hands(rules, "", 0, None, None, &hands, &[], None)),
        ("third copy", Game::from_hands(rules, "", 0, None, None, &third, &kitty, None)),
        ("not a card", Game::from_hands(rules, "", 0, None, None, &foreign, &kitty, None)),
        ("passes", Game::from_hands(rules, "", 0, None, None, &hands, &kitty, Some(&two))),
        ("history", Game::from_hands(rules, "", 1, None, Some(&wrong_history), &hands, &kitty, None)),
    ];
    for (what, result) in cases {
        let err = result.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(err.kind, Illegal::BadDeal, "{what}: {err}");
        assert_eq!((err.hand, err.play, err.seat), (None, None, None), "{what}");
    }
}
