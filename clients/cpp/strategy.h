// The bot's three decisions, as plain functions of card codes ("QS", "TH", ...), so that they
// are easy to test without a server.
#pragma once

#include <string>
#include <vector>

using Cards = std::vector<std::string>;

// The three most dangerous cards of the hand: QS, then AS/KS, then high hearts, then high cards.
Cards ChoosePass(const Cards& hand);

// One of `legal` (never empty), given the cards already played to the current trick.
std::string ChoosePlay(const Cards& legal, const Cards& trick);
