// Tests of the strategy (ctest, or run build/strategy_test).
#include <iostream>
#include <sstream>

#include "strategy.h"

namespace {

Cards Split(const std::string& codes) {
  std::istringstream in(codes);
  Cards cards;
  for (std::string c; in >> c;) cards.push_back(c);
  return cards;
}

}  // namespace

int main() {
  int failed = 0;
  if (ChoosePass(Split("2C AC 3H KH KS QS 5D")) != Split("QS KS KH")) {
    std::cerr << "ChoosePass: wrong cards\n";
    ++failed;
  }
  struct Case {
    const char *legal, *trick, *want;
  } cases[] = {
      {"5C 3D AS", "", "3D"},       // lead the lowest
      {"4C 9C KC", "TC 2C", "9C"},  // duck under the winner
      {"4C TC KC", "TC 2C", "TC"},  // cancelling the winner does not win
      {"3C KC", "AC AC 5C", "3C"},  // a cancelled ace does not win
      {"JC KC", "TC", "JC"},        // must win: the lowest
      {"2H QS AD", "TC", "QS"},     // void: the Black Maria
      {"2H JH AD", "TC", "JH"},     // void: the highest heart
      {"2D AD 5S", "TC", "AD"},     // void: the highest card
  };
  for (const auto& c : cases) {
    const std::string got = ChoosePlay(Split(c.legal), Split(c.trick));
    if (got != c.want) {
      std::cerr << "ChoosePlay(" << c.legal << " / " << c.trick << ") = " << got << ", want " << c.want << "\n";
      ++failed;
    }
  }
  std::cout << (failed ? "FAILED" : "ok") << "\n";
  return failed ? 1 : 0;
}
