// A small example Cancellation Hearts bot: it plays one seat over the referee's gRPC bot
// protocol (proto/cancellation_hearts/v1/referee_service.proto) with gRPC C++.
//
//   bot --server TARGET --token-file FILE [--name NAME]
//
// TARGET is HOST:PORT or unix:PATH (the referee's Unix socket, the only way out of the
// tournament's sandbox; gRPC C++ resolves unix: targets itself). The seat token is the text of
// FILE, whitespace stripped; --token TOKEN gives it directly, for manual use (a command line is
// visible to other processes). The flags default to the environment variables HEARTS_SERVER,
// HEARTS_TOKEN_FILE, HEARTS_TOKEN and HEARTS_BOT_NAME.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "cancellation_hearts/v1/referee_service.grpc.pb.h"
#include "strategy.h"

namespace pb = cancellation_hearts::v1;
using std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

const char* CodeName(grpc::StatusCode code) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? names[code] : "?";
}

// The outcome of one stream: its final status, and whether anything was received.
struct Outcome {
  grpc::Status status;
  bool progressed = false;
};

void AnswerWith(pb::PlayRequest& out, const pb::DecisionRequest& request, bool safest) {
  pb::Decision* decision = out.mutable_decision();
  decision->set_request_id(request.request_id());
  const auto& hand = request.view().hand();
  const auto& legal = request.legal_cards();
  switch (request.kind()) {
    case pb::DECISION_KIND_PASS: {
      Cards cards = safest ? Cards(hand.begin(), hand.begin() + std::min(3, hand.size()))
                           : ChoosePass(Cards(hand.begin(), hand.end()));
      for (const auto& card : cards) decision->mutable_pass_cards()->add_cards(card);
      break;
    }
    case pb::DECISION_KIND_PLAY: {
      const auto& trick = request.view().current_trick().cards();
      if (legal.empty()) break;  // never sent so
      decision->mutable_play_card()->set_card(
          safest ? legal[0] : ChoosePlay(Cards(legal.begin(), legal.end()), Cards(trick.begin(), trick.end())));
      break;
    }
    default:
      decision->mutable_choose_moon()->set_choice(pb::MOON_CHOICE_SELF_MINUS_26);
  }
}

void LogEvent(const pb::Event& event) {
  auto list = [](const auto& values) {
    std::string s;
    for (auto v : values) s += (s.empty() ? "" : " ") + std::to_string(v);
    return "[" + s + "]";
  };
  switch (event.event_case()) {
    case pb::Event::kGameStarted: {
      const auto& g = event.game_started();
      std::cerr << "cpp-bot: game " << g.game_id() << " (" << g.game_number() + 1 << " of " << g.games_total()
                << "): seat " << g.your_seat() << " of " << g.players() << "\n";
      break;
    }
    case pb::Event::kHandCompleted:
      std::cerr << "cpp-bot: hand " << event.hand_completed().hand_index() << " over: totals "
                << list(event.hand_completed().totals()) << "\n";
      break;
    case pb::Event::kGameCompleted:
      std::cerr << "cpp-bot: game over: totals " << list(event.game_completed().totals()) << ", winners "
                << list(event.game_completed().winners()) << "\n";
      break;
    case pb::Event::kSeatFaulted: {
      const auto& f = event.seat_faulted();
      std::cerr << "cpp-bot: fault: seat " << f.seat() << " " << pb::FaultKind_Name(f.kind()) << ": " << f.detail()
                << "\n";
      break;
    }
    default:
      break;
  }
}

// Runs one stream: join, then answer every decision request until the referee closes it.
Outcome Play(pb::RefereeService::Stub& stub, const std::string& token, const std::string& name) {
  grpc::ClientContext context;
  auto stream = stub.Play(&context);
  pb::PlayRequest join;
  join.mutable_join()->set_token(token);
  join.mutable_join()->set_bot_name(name);
  join.mutable_join()->set_protocol_version(1);
  stream->Write(join);  // a failed write means the stream is gone: Read fails and Finish says why

  Outcome outcome;
  pb::DecisionRequest open;  // the last request, answered again after a rejection
  bool retried = false;
  pb::PlayResponse response;
  while (stream->Read(&response)) {
    outcome.progressed = true;
    pb::PlayRequest answer;
    switch (response.message_case()) {
      case pb::PlayResponse::kEvent:
        LogEvent(response.event());
        break;
      case pb::PlayResponse::kEvents:  // a batch means the same as its events one by one
        for (const auto& event : response.events().events()) LogEvent(event);
        break;
      case pb::PlayResponse::kSnapshot:
        std::cerr << "cpp-bot: reconnected: hand " << response.snapshot().view().hand_index() << ", phase "
                  << pb::Phase_Name(response.snapshot().view().phase()) << "\n";
        break;
      case pb::PlayResponse::kDecisionRequest:
        open = response.decision_request();
        retried = false;
        AnswerWith(answer, open, /*safest=*/false);
        stream->Write(answer);
        break;
      case pb::PlayResponse::kRejection: {
        const auto& r = response.rejection();
        std::cerr << "cpp-bot: rejected (request " << r.request_id() << "): " << r.code() << ": " << r.reason()
                  << "\n";
        // Answer the still-open request once more, with the safest answer there is.
        if (r.request_id() == open.request_id() && open.request_id() != 0 && !retried &&
            r.code() != "STALE_REQUEST") {
          retried = true;
          AnswerWith(answer, open, /*safest=*/true);
          stream->Write(answer);
        }
        break;
      }
      default:
        break;
    }
  }
  outcome.status = stream->Finish();
  return outcome;
}

// The seat token: the text of token_file (whitespace stripped) when given, else token. Prints
// one line and returns nothing when there is none.
std::optional<std::string> ReadToken(const std::string& token, const std::string& token_file) {
  if (!token_file.empty()) {
    std::ifstream in(token_file, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      std::cerr << "cpp-bot: cannot read the token file " << token_file << ": " << std::strerror(errno)
                << "\n";
      return std::nullopt;
    }
    std::string value = text.str();
    const char* space = " \t\r\n\f\v";
    value.erase(0, value.find_first_not_of(space));
    value.erase(value.find_last_not_of(space) + 1);
    if (value.empty()) {
      std::cerr << "cpp-bot: the token file " << token_file << " is empty\n";
      return std::nullopt;
    }
    return value;
  }
  if (token.empty()) {
    std::cerr << "cpp-bot: a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T "
                 "(HEARTS_TOKEN)\n";
    return std::nullopt;
  }
  return token;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags = {
      {"server", EnvOr("HEARTS_SERVER", "127.0.0.1:50051")},
      {"token", EnvOr("HEARTS_TOKEN", "")},
      {"token-file", EnvOr("HEARTS_TOKEN_FILE", "")},
      {"name", EnvOr("HEARTS_BOT_NAME", "cpp-example")},
  };
  for (int i = 1; i < argc; ++i) {  // --flag VALUE or --flag=VALUE
    std::string arg = argv[i], value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    }
    if (arg.rfind("--", 0) != 0 || !flags.count(arg.substr(2))) {
      std::cerr << "usage: bot --server HOST:PORT|unix:PATH --token-file FILE [--name NAME]"
                   " (or --token TOKEN, for manual use)\n";
      return 2;
    }
    flags[arg.substr(2)] = value;
  }
  std::optional<std::string> token = ReadToken(flags["token"], flags["token-file"]);
  if (!token) return 2;

  grpc::ChannelArguments args;  // reconnect the connection as quickly as the streams below
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  auto channel = grpc::CreateCustomChannel(flags["server"], grpc::InsecureChannelCredentials(), args);
  auto stub = pb::RefereeService::NewStub(channel);

  // Play until the stream ends with OK. When it breaks, reconnect at once (the referee plays for
  // an absent seat, each time with a fault), then back off from 0.1 s to 2 s.
  std::chrono::milliseconds backoff = 0ms;
  auto failing_since = steady_clock::now();
  for (;;) {
    Outcome outcome = Play(*stub, *token, flags["name"]);
    const grpc::Status& status = outcome.status;
    if (status.ok()) {
      std::cerr << "cpp-bot: the table's games are over\n";
      return 0;
    }
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
      case grpc::StatusCode::ALREADY_EXISTS:
      case grpc::StatusCode::INTERNAL:
      case grpc::StatusCode::RESOURCE_EXHAUSTED:  // the referee closed a flooding stream: reconnect
        break;
      default:
        std::cerr << "cpp-bot: the referee ended the stream: " << CodeName(status.error_code()) << ": "
                  << status.error_message() << "\n";
        return 1;
    }
    if (outcome.progressed) {
      backoff = 0ms;
      failing_since = steady_clock::now();
    }
    if (steady_clock::now() - failing_since > 30s) {
      std::cerr << "cpp-bot: giving up after 30s of failures: " << status.error_message() << "\n";
      return 1;
    }
    std::cerr << "cpp-bot: stream broken (" << CodeName(status.error_code()) << ": " << status.error_message()
              << "); reconnecting in " << backoff.count() << " ms\n";
    std::this_thread::sleep_for(backoff);
    backoff = std::clamp<std::chrono::milliseconds>(backoff * 2, 100ms, 2s);
  }
}
