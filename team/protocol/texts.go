package protocol

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// What agents read in their inboxes from shutdown and plan approval.

// shutdownRequestText asks a teammate to shut down.
func shutdownRequestText(reason, id string) string {
	return fmt.Sprintf("The lead asks you to shut down: %s\nAnswer with respond_shutdown(request_id=%q, approve=true) to stop at the end of this turn, "+
		"or approve=false with a reason to keep working. If you end your turn without answering, the shutdown is approved for you.", fullStop(reason), id)
}

// fullStop ends a reason given in a few words as a sentence, so the next
// sentence does not run on from it ("… asked for it Answer with …").
func fullStop(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?") {
		return s
	}
	return s + "."
}

// shutdownAnswerText tells the lead a teammate's answer to its shutdown request.
func shutdownAnswerText(from string, approve bool, reason string) string {
	if !approve {
		return fmt.Sprintf("%s rejected the shutdown request: %s", from, reason)
	}
	return fmt.Sprintf("%s approved the shutdown request.", from)
}

// shutdownIdleText tells the lead the runtime approved for an idle teammate.
func shutdownIdleText(name string) string {
	return fmt.Sprintf("%s was idle, so the runtime approved the shutdown for it.", name)
}

// shutdownForcedText tells the lead a teammate that did not answer was stopped.
func shutdownForcedText(name string, timeout time.Duration) string {
	return fmt.Sprintf("%s did not answer within %s and was shut down by force.", name, timeout)
}

// planRequestText asks the lead to review a teammate's plan.
func planRequestText(from, plan, id string) string {
	return fmt.Sprintf("%s asks you to approve its plan (request %s):\n\n%s\n\nAnswer with review_plan(request_id=%q, approve=true or false, feedback=...).",
		from, id, plan, id)
}

// planReviewText tells a teammate the lead's review of its plan.
func planReviewText(from string, approve bool, feedback string) string {
	who := "The lead"
	if from == inbox.UserName {
		who = "The person"
	}
	s := who + " approved your plan: you may now change files and run any command."
	if !approve {
		s = who + " rejected your plan. Revise it and submit_plan again."
	}
	if feedback != "" {
		s += "\nFeedback: " + feedback
	}
	return s
}

// planExpiredFeedback is why a plan got no review.
func planExpiredFeedback(timeout time.Duration) string {
	return fmt.Sprintf("the lead did not review your plan within %s; you are still read-only: message the lead or submit the plan again", timeout)
}

// planExpiredText tells a teammate its plan got no review in time.
func planExpiredText(feedback string) string { return "No review: " + feedback }
