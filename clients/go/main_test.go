package main

import (
	"testing"

	pb "github.com/cancellation-hearts/cancellation-hearts/clients/go/gen/cancellation_hearts/v1"
)

func TestRetryableByTheEnum(t *testing.T) {
	for code, want := range map[pb.RejectionCode]bool{
		pb.RejectionCode_REJECTION_CODE_MUST_FOLLOW_SUIT: true,
		pb.RejectionCode_REJECTION_CODE_UNKNOWN_CARD:     true,
		pb.RejectionCode_REJECTION_CODE_STALE_REQUEST:    false,
		pb.RejectionCode_REJECTION_CODE_NOT_YOUR_TURN:    false,
		pb.RejectionCode_REJECTION_CODE_MALFORMED:        false,
		pb.RejectionCode_REJECTION_CODE_UNSPECIFIED:      false,
		pb.RejectionCode(99):                             false, // newer than this bot
	} {
		if got := retryable(code); got != want {
			t.Errorf("retryable(%v) = %v, want %v", code, got, want)
		}
	}
}

func TestAnUnknownDecisionKindIsLeftToTheReferee(t *testing.T) {
	req := &pb.DecisionRequest{RequestId: 7, Kind: pb.DecisionKind(42)}
	if got := decide(req); got != nil {
		t.Errorf("decide(unknown kind) = %v, want nil (no moon choice)", got)
	}
	if got := fallback(req); got != nil {
		t.Errorf("fallback(unknown kind) = %v, want nil", got)
	}
	moon := decide(&pb.DecisionRequest{RequestId: 8, Kind: pb.DecisionKind_DECISION_KIND_MOON})
	if moon.GetDecision().GetChooseMoon() == nil {
		t.Errorf("decide(moon) = %v, want a moon choice", moon)
	}
}
