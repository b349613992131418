package handoff

import (
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/team/registry"
)

// What agents read in their inboxes from a handoff ; the
// context itself is written by contextText (context.go).

// handoffRequestText asks the receiver to take a task over.
func handoffRequestText(h *Handoff) string {
	return fmt.Sprintf("%s wants to hand you %s (request %s).\nWhy: %s\nYour runtime answers for you; if it accepts, %s's context follows as a context_transfer message.",
		h.from, h.label(), h.id, h.reason, h.from)
}

// handoffRejectedText tells the sender the receiver's runtime said no.
func handoffRejectedText(h *Handoff) string {
	return fmt.Sprintf("%s's runtime rejected the handoff of %s (request %s): %s. The task stays yours.", h.to, h.label(), h.id, h.verdict)
}

// handoffAcceptedText tells the sender the receiver's runtime said yes.
func handoffAcceptedText(h *Handoff) string {
	return fmt.Sprintf("%s's runtime accepted the handoff of %s (request %s); your context is being sent to it.", h.to, h.label(), h.id)
}

// handoffCompleteText tells the sender the receiver has the context and the task.
func handoffCompleteText(h *Handoff) string {
	return fmt.Sprintf("%s has your context for %s (request %s) and takes the task over: stop working on it.", h.to, h.label(), h.id)
}

// handoffFailedText tells the sender why the handoff failed.
func handoffFailedText(h *Handoff, why string) string {
	return fmt.Sprintf("The handoff of %s to %s (request %s) failed: %s. The task stays yours.", h.label(), h.to, h.id, why)
}

// handoffFailedReceiverText tells a receiver that had accepted why the handoff failed.
func handoffFailedReceiverText(h *Handoff, why string) string {
	return fmt.Sprintf("The handoff of %s from %s (request %s) failed: %s. The task stays %s's: do not work on it.", h.label(), h.from, h.id, why, h.from)
}

// remoteVerdict is the receiver runtime's answer to a handoff for a
// teammate another worker runs, played in the sender's process from the
// registry: the answer needs no model, and everything it changes (the
// inboxes, the registry, the board) is shared by every worker. The context
// then reaches the receiver through its inbox, on whichever worker runs it.
func remoteVerdict(h *Handoff, mb Receiver) string {
	switch mb.Status {
	case registry.StatusQueued, registry.StatusWorking:
		return fmt.Sprintf("busy: %s is already working at its limit (%s)", h.to, mb.Status)
	case registry.StatusShutdown, registry.StatusFailed:
		return fmt.Sprintf("%s is %s", h.to, mb.Status)
	}
	if mb.Ended {
		return fmt.Sprintf("%s has ended", h.to)
	}
	if mb.Worker != "" && !mb.WorkerAlive {
		return fmt.Sprintf("%s's worker %s is gone", h.to, mb.Worker)
	}
	if h.role != "" && !strings.EqualFold(h.role, mb.Role) {
		return fmt.Sprintf("its role does not fit: %s asks for a %s, %s is a %s", h.taskID, h.role, h.to, mb.Role)
	}
	return ""
}
