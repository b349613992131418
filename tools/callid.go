package tools

import "context"

type callIDKey struct{}

// WithCallID tells the tool being run which tool call of the conversation
// it answers, so that what it writes can carry an id derived from it.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the id of the tool call being run, or "" outside a tool call.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
