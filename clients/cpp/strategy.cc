#include "strategy.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace {

int Rank(std::string_view card) { return int(std::string_view("23456789TJQKA").find(card[0])); }
char Suit(std::string_view card) { return card[1]; }

// Orders cards for passing: the Black Maria, then the high spades that may catch it, then
// hearts (high first), then everything else by rank.
int Danger(const std::string& card) {
  if (card == "QS") return 300;
  if (card == "AS" || card == "KS") return 200 + Rank(card);
  if (Suit(card) == 'H') return 100 + Rank(card);
  return Rank(card);
}

bool ByRank(const std::string& a, const std::string& b) { return Rank(a) < Rank(b); }

// Whether `card` would be winning the trick if played after `played`: the trick goes to the
// highest card of the led suit that was played only once.
bool Wins(const Cards& played, const std::string& card) {
  Cards all = played;
  all.push_back(card);
  const char led = Suit(all.front());
  const std::string* best = nullptr;
  for (const auto& c : all) {
    if (Suit(c) == led && std::count(all.begin(), all.end(), c) == 1 && (!best || ByRank(*best, c)))
      best = &c;
  }
  return best && *best == card;
}

std::string Lowest(const Cards& cards) { return *std::min_element(cards.begin(), cards.end(), ByRank); }
std::string Highest(const Cards& cards) { return *std::max_element(cards.begin(), cards.end(), ByRank); }

template <typename Keep>
Cards Where(const Cards& cards, Keep keep) {
  Cards out;
  std::copy_if(cards.begin(), cards.end(), std::back_inserter(out), keep);
  return out;
}

}  // namespace

Cards ChoosePass(const Cards& hand) {
  Cards cards = hand;
  std::stable_sort(cards.begin(), cards.end(),
                   [](const std::string& a, const std::string& b) { return Danger(a) > Danger(b); });
  cards.resize(std::min<size_t>(3, cards.size()));
  return cards;
}

std::string ChoosePlay(const Cards& legal, const Cards& trick) {
  if (trick.empty()) return Lowest(legal);  // leading: the lowest card
  const char led = Suit(trick.front());
  const bool following =
      std::all_of(legal.begin(), legal.end(), [&](const std::string& c) { return Suit(c) == led; });
  if (following) {  // the highest card that does not take the trick, else the lowest
    Cards safe = Where(legal, [&](const std::string& c) { return !Wins(trick, c); });
    return safe.empty() ? Lowest(legal) : Highest(safe);
  }
  // Void in the led suit: dump the Black Maria, else the highest heart, else the highest card.
  if (std::find(legal.begin(), legal.end(), "QS") != legal.end()) return "QS";
  Cards hearts = Where(legal, [](const std::string& c) { return Suit(c) == 'H'; });
  return hearts.empty() ? Highest(legal) : Highest(hearts);
}
