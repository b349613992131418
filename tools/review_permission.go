package tools

import "context"

// PermissionReviewer answers teammates' permission asks for the lead
// (--permission-delegate lead). It can only allow what reached it as an
// ask: a call a deny rule refuses is never asked about.
type PermissionReviewer interface {
	ReviewPermission(ctx context.Context, from, requestID string, approve bool, reason string) (string, error)
}

type reviewPermissionArgs struct {
	RequestID string `json:"request_id" description:"The correlation_id of the permission_request message."`
	Approve   bool   `json:"approve" description:"true lets this one tool call run; false refuses it."`
	Reason    string `json:"reason,omitempty" description:"Why (required when refusing): the teammate reads it."`
}

// newReviewPermission answers permission asks through r as agent (the lead).
func newReviewPermission(r PermissionReviewer, agent string) Tool {
	return newTool(ReviewPermissionName,
		"Allow or deny a teammate's tool call that needs permission (a permission_request message: the command, or the diff of the write). "+
			"The teammate waits until you answer. Allow only what its work needs.",
		func(ctx context.Context, a reviewPermissionArgs) (Result, error) {
			if err := nonEmpty("request_id", a.RequestID); err != nil {
				return Errorf("%v", err), nil
			}
			if !a.Approve {
				if err := nonEmpty("reason", a.Reason); err != nil {
					return Errorf("a refusal needs a reason: %v", err), nil
				}
			}
			return textOrRefusal(r.ReviewPermission(ctx, agent, a.RequestID, a.Approve, a.Reason))
		})
}
