// Command bot is a small example Cancellation Hearts bot: it plays one seat over the
// referee's gRPC bot protocol (proto/cancellation_hearts/v1/referee_service.proto).
//
//	bot --server TARGET --token-file FILE [--name NAME]
//
// TARGET is HOST:PORT or unix:PATH (the referee's Unix socket, the only way out of the
// tournament's sandbox). The seat token is the text of FILE, whitespace stripped; --token TOKEN
// gives it directly, for manual use (a command line is visible to other processes). The flags
// default to the environment variables HEARTS_SERVER, HEARTS_TOKEN_FILE, HEARTS_TOKEN and
// HEARTS_BOT_NAME.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/cancellation-hearts/cancellation-hearts/clients/go/gen/cancellation_hearts/v1"
)

const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 2 * time.Second
	giveUpAfter  = 30 * time.Second
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-bot: ")
	server := flag.String("server", envOr("HEARTS_SERVER", "127.0.0.1:50051"),
		"referee target HOST:PORT or unix:PATH (env HEARTS_SERVER)")
	tokenFile := flag.String("token-file", os.Getenv("HEARTS_TOKEN_FILE"),
		"file holding the seat's secret token (env HEARTS_TOKEN_FILE)")
	tokenFlag := flag.String("token", os.Getenv("HEARTS_TOKEN"),
		"the seat's secret token, for manual use (env HEARTS_TOKEN)")
	name := flag.String("name", envOr("HEARTS_BOT_NAME", "go-example"), "bot name, for logs (env HEARTS_BOT_NAME)")
	flag.Parse()
	token, err := readToken(*tokenFlag, *tokenFile)
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}

	// grpc-go resolves "unix:PATH" (and "unix:///PATH") itself; HOST:PORT goes through DNS.
	conn, err := grpc.NewClient(*server,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Reconnect the connection as quickly as the streams below.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: firstBackoff, Multiplier: 2, MaxDelay: maxBackoff}}))
	if err != nil {
		log.Fatalf("cannot connect to %s: %v", *server, err)
	}
	defer conn.Close()
	client := pb.NewRefereeServiceClient(conn)

	// Play until the stream ends with OK. When it breaks, reconnect at once (the referee plays
	// for an absent seat, each time with a fault), then back off from 0.1 s to 2 s.
	delay, failingSince := time.Duration(0), time.Time{}
	for {
		progressed, err := play(client, token, *name)
		if err == nil {
			log.Print("the table's games are over")
			return
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.Canceled, codes.AlreadyExists, codes.Internal,
			codes.ResourceExhausted: // the referee closed a flooding stream and asks for a reconnection
		default:
			log.Printf("the referee ended the stream: %s: %s", status.Code(err), status.Convert(err).Message())
			os.Exit(1)
		}
		if progressed || failingSince.IsZero() {
			delay, failingSince = 0, time.Now()
		}
		if time.Since(failingSince) > giveUpAfter {
			log.Printf("giving up after %s of failures: %v", giveUpAfter, err)
			os.Exit(1)
		}
		log.Printf("stream broken (%v); reconnecting in %s", err, delay)
		time.Sleep(delay)
		delay = min(max(2*delay, firstBackoff), maxBackoff)
	}
}

// play runs one stream: join, then answer every decision request. It returns nil when the
// referee closes the stream with OK, and whether it received anything (the join worked).
func play(client pb.RefereeServiceClient, token, name string) (progressed bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := client.Play(ctx)
	if err != nil {
		return false, err
	}
	join := &pb.Join{Token: token, BotName: name, ProtocolVersion: 1}
	// A failed Send means the stream is gone; Recv below reports why.
	_ = stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Join{Join: join}})

	var open *pb.DecisionRequest // the last request, answered again after a rejection
	retried := false
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return progressed, err
		}
		progressed = true
		switch m := msg.Message.(type) {
		case *pb.PlayResponse_Event:
			logEvent(m.Event)
		case *pb.PlayResponse_Events: // a batch means the same as its events one by one
			for _, e := range m.Events.Events {
				logEvent(e)
			}
		case *pb.PlayResponse_Snapshot:
			log.Printf("reconnected: hand %d, phase %s", m.Snapshot.View.GetHandIndex(), m.Snapshot.View.GetPhase())
		case *pb.PlayResponse_DecisionRequest:
			open, retried = m.DecisionRequest, false
			if answer := decide(open); answer != nil {
				_ = stream.Send(answer)
			} else { // a kind newer than this bot: the referee's default answers it in time
				log.Printf("request %d: unknown decision kind %s, left to the referee", open.RequestId, open.Kind)
			}
		case *pb.PlayResponse_Rejection:
			r := m.Rejection
			log.Printf("rejected (request %d): %s: %s", r.RequestId, r.RejectionCode, r.Reason)
			// Answer the still-open request once more, with the safest answer there is.
			if open != nil && r.RequestId == open.RequestId && !retried && retryable(r.RejectionCode) {
				if answer := fallback(open); answer != nil {
					retried = true
					_ = stream.Send(answer)
				}
			}
		}
	}
}

// retryable says whether a rejection is worth answering again within the same request: the
// rule codes, UNKNOWN_CARD and WRONG_ANSWER; not STALE_REQUEST or NOT_YOUR_TURN (wait for the
// next request), MALFORMED or UNEXPECTED (a bug here), nor a code newer than this bot.
func retryable(code pb.RejectionCode) bool {
	switch code {
	case pb.RejectionCode_REJECTION_CODE_NOT_IN_HAND, pb.RejectionCode_REJECTION_CODE_MUST_FOLLOW_SUIT,
		pb.RejectionCode_REJECTION_CODE_HEARTS_NOT_BROKEN, pb.RejectionCode_REJECTION_CODE_FIRST_LEAD_RESTRICTED,
		pb.RejectionCode_REJECTION_CODE_BAD_PASS_COUNT, pb.RejectionCode_REJECTION_CODE_PASS_NOT_IN_HAND,
		pb.RejectionCode_REJECTION_CODE_BAD_MOON_CHOICE, pb.RejectionCode_REJECTION_CODE_UNKNOWN_CARD,
		pb.RejectionCode_REJECTION_CODE_WRONG_ANSWER:
		return true
	}
	return false
}

// decide answers a request, or returns nil for a decision kind this bot does not know.
func decide(req *pb.DecisionRequest) *pb.PlayRequest {
	d := &pb.Decision{RequestId: req.RequestId}
	switch req.Kind {
	case pb.DecisionKind_DECISION_KIND_PASS:
		d.Answer = &pb.Decision_PassCards{PassCards: &pb.PassCards{Cards: choosePass(req.View.GetHand())}}
	case pb.DecisionKind_DECISION_KIND_PLAY:
		card := choosePlay(req.LegalCards, req.View.GetCurrentTrick().GetCards())
		d.Answer = &pb.Decision_PlayCard{PlayCard: &pb.PlayCard{Card: card}}
	case pb.DecisionKind_DECISION_KIND_MOON:
		d.Answer = &pb.Decision_ChooseMoon{ChooseMoon: &pb.ChooseMoon{Choice: pb.MoonChoice_MOON_CHOICE_SELF_MINUS_26}}
	default:
		return nil
	}
	return &pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: d}}
}

// fallback answers a request in the plainest legal way: the first legal card, the first
// three cards of the hand.
func fallback(req *pb.DecisionRequest) *pb.PlayRequest {
	answer := decide(req)
	if answer == nil {
		return nil
	}
	d := answer.GetDecision()
	switch req.Kind {
	case pb.DecisionKind_DECISION_KIND_PASS:
		d.Answer = &pb.Decision_PassCards{PassCards: &pb.PassCards{Cards: firstN(req.View.GetHand(), 3)}}
	case pb.DecisionKind_DECISION_KIND_PLAY:
		d.Answer = &pb.Decision_PlayCard{PlayCard: &pb.PlayCard{Card: req.LegalCards[0]}}
	}
	return answer
}

func logEvent(e *pb.Event) {
	switch ev := e.Event.(type) {
	case *pb.Event_GameStarted:
		g := ev.GameStarted
		log.Printf("game %s (%d of %d): seat %d of %d", g.GameId, g.GameNumber+1, g.GamesTotal, g.GetYourSeat(), g.Players)
	case *pb.Event_HandCompleted:
		log.Printf("hand %d over: totals %v", ev.HandCompleted.HandIndex, ev.HandCompleted.Totals)
	case *pb.Event_GameCompleted:
		log.Printf("game over: totals %v, winners %v", ev.GameCompleted.Totals, ev.GameCompleted.Winners)
	case *pb.Event_SeatFaulted:
		f := ev.SeatFaulted
		log.Printf("fault: seat %d %s: %s", f.Seat, f.Kind, f.Detail)
	}
}

// readToken is the seat token: the text of tokenFile (whitespace stripped) when given, else
// token.
func readToken(token, tokenFile string) (string, error) {
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", fmt.Errorf("cannot read the token file %s: %w", tokenFile, err)
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			return "", fmt.Errorf("the token file %s is empty", tokenFile)
		}
		return text, nil
	}
	if token != "" {
		return token, nil
	}
	return "", errors.New("a seat token is needed: --token-file FILE (HEARTS_TOKEN_FILE) or --token T (HEARTS_TOKEN)")
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func firstN(cards []string, n int) []string { return cards[:min(n, len(cards))] }
