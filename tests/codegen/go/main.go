// A minimal bot on the code docs/PROTOCOL.md's Go recipe generates: it passes its first three
// cards and plays the first legal card. HEARTS_SERVER is host:port, HEARTS_TOKEN_FILE the token.
package main

import (
	"context"
	"io"
	"log"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "example.com/mybot/cancellation_hearts/v1"
)

func main() {
	token, err := os.ReadFile(os.Getenv("HEARTS_TOKEN_FILE"))
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient(os.Getenv("HEARTS_SERVER"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	stream, err := pb.NewRefereeServiceClient(conn).Play(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	join := &pb.Join{Token: strings.TrimSpace(string(token)), BotName: "recipe-go", ProtocolVersion: 1}
	if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Join{Join: join}}); err != nil {
		log.Fatal(err)
	}
	for {
		response, err := stream.Recv()
		if err == io.EOF {
			return
		}
		if err != nil {
			log.Fatal(err)
		}
		request := response.GetDecisionRequest()
		if request == nil {
			continue
		}
		decision := &pb.Decision{RequestId: request.GetRequestId()}
		switch request.GetKind() {
		case pb.DecisionKind_DECISION_KIND_PASS:
			decision.Answer = &pb.Decision_PassCards{PassCards: &pb.PassCards{Cards: request.GetView().GetHand()[:3]}}
		case pb.DecisionKind_DECISION_KIND_PLAY:
			decision.Answer = &pb.Decision_PlayCard{PlayCard: &pb.PlayCard{Card: request.GetLegalCards()[0]}}
		default:
			decision.Answer = &pb.Decision_ChooseMoon{ChooseMoon: &pb.ChooseMoon{Choice: pb.MoonChoice_MOON_CHOICE_SELF_MINUS_26}}
		}
		if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: decision}}); err != nil {
			log.Fatal(err)
		}
	}
}
