// A minimal bot on the code docs/PROTOCOL.md's C++ recipe generates: it passes its first three
// cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <grpcpp/grpcpp.h>

#include "cancellation_hearts/v1/referee_service.grpc.pb.h"

namespace pb = cancellation_hearts::v1;

int main() {
  std::ifstream file(std::getenv("HEARTS_TOKEN_FILE"));
  std::string token;
  file >> token;  // the token without its newline
  auto channel = grpc::CreateChannel(std::getenv("HEARTS_SERVER"), grpc::InsecureChannelCredentials());
  auto stub = pb::RefereeService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);
  pb::PlayRequest join;
  join.mutable_join()->set_token(token);
  join.mutable_join()->set_bot_name("recipe-cpp");
  join.mutable_join()->set_protocol_version(1);
  stream->Write(join);
  pb::PlayResponse response;
  while (stream->Read(&response)) {
    if (!response.has_decision_request()) continue;
    const pb::DecisionRequest& request = response.decision_request();
    pb::PlayRequest answer;
    pb::Decision* decision = answer.mutable_decision();
    decision->set_request_id(request.request_id());
    if (request.kind() == pb::DECISION_KIND_PASS) {
      for (int i = 0; i < 3; ++i) decision->mutable_pass_cards()->add_cards(request.view().hand(i));
    } else if (request.kind() == pb::DECISION_KIND_PLAY) {
      decision->mutable_play_card()->set_card(request.legal_cards(0));
    } else {
      decision->mutable_choose_moon()->set_choice(pb::MOON_CHOICE_SELF_MINUS_26);
    }
    stream->Write(answer);
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  if (!status.ok()) {
    std::cerr << status.error_message() << "\n";
    return 1;
  }
  return 0;
}
