//! The bot's three decisions, as plain functions of card codes ("QS", "TH", ...), so that they
//! are easy to test without a server.

const RANKS: &str = "23456789TJQKA";

fn rank(card: &str) -> usize {
    RANKS.find(&card[..1]).unwrap_or(0)
}

fn suit(card: &str) -> &str {
    &card[1..2]
}

/// Orders cards for passing: the Black Maria, then the high spades that may catch it, then
/// hearts (high first), then everything else by rank.
fn danger(card: &str) -> usize {
    match card {
        "QS" => 300,
        "AS" | "KS" => 200 + rank(card),
        _ if suit(card) == "H" => 100 + rank(card),
        _ => rank(card),
    }
}

/// The three most dangerous cards of the hand.
pub fn choose_pass(hand: &[String]) -> Vec<String> {
    let mut cards = hand.to_vec();
    cards.sort_by_key(|c| std::cmp::Reverse(danger(c)));
    cards.truncate(3);
    cards
}

/// Whether `card` would be winning the trick if played after `played`: the trick goes to the
/// highest card of the led suit that was played only once.
fn wins(played: &[String], card: &str) -> bool {
    let all: Vec<&str> = played.iter().map(String::as_str).chain([card]).collect();
    let led = suit(all[0]);
    let best = all
        .iter()
        .filter(|c| suit(c) == led && all.iter().filter(|d| d == c).count() == 1)
        .max_by_key(|c| rank(c));
    best == Some(&card)
}

fn lowest<'a>(cards: impl Iterator<Item = &'a String>) -> Option<String> {
    cards.min_by_key(|c| rank(c)).cloned()
}

fn highest<'a>(cards: impl Iterator<Item = &'a String>) -> Option<String> {
    cards.max_by_key(|c| rank(c)).cloned()
}

/// Picks one of `legal` (never empty) given the cards already played to the current trick.
pub fn choose_play(legal: &[String], trick: &[String]) -> String {
    let chosen = match trick.first() {
        // Leading: the lowest card.
        None => lowest(legal.iter()),
        // Following: the highest card that does not take the trick, else the lowest.
        Some(first) if legal.iter().all(|c| suit(c) == suit(first)) => {
            highest(legal.iter().filter(|c| !wins(trick, c))).or_else(|| lowest(legal.iter()))
        }
        // Void: dump the Black Maria, else the highest heart, else the highest card.
        Some(_) if legal.iter().any(|c| c == "QS") => Some("QS".to_string()),
        Some(_) => highest(legal.iter().filter(|c| suit(c) == "H")).or_else(|| highest(legal.iter())),
    };
    chosen.expect("legal cards are never empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(codes: &str) -> Vec<String> {
        codes.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn passes_the_most_dangerous_cards() {
        assert_eq!(choose_pass(&cards("2C AC 3H KH KS QS 5D")), cards("QS KS KH"));
    }

    #[test]
    fn plays_sensibly() {
        let cases = [
            ("5C 3D AS", "", "3D"),      // lead the lowest
            ("4C 9C KC", "TC 2C", "9C"), // duck under the winner
            ("4C TC KC", "TC 2C", "TC"), // cancelling the winner does not win
            ("3C KC", "AC AC 5C", "3C"), // a cancelled ace does not win
            ("JC KC", "TC", "JC"),       // must win: the lowest
            ("2H QS AD", "TC", "QS"),    // void: the Black Maria
            ("2H JH AD", "TC", "JH"),    // void: the highest heart
            ("2D AD 5S", "TC", "AD"),    // void: the highest card
        ];
        for (legal, trick, want) in cases {
            assert_eq!(choose_play(&cards(legal), &cards(trick)), want, "{legal} / {trick}");
        }
    }
}
