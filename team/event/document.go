// Package event is what a team says happened: one typed payload per kind
// (a spawn, a status, a message, a tool call, an answer, a request…), each
// written as one flat JSON line of events.jsonl or a store's event stream,
// and said in a sentence for progress lines and the views. The event log
// appends and hands events to a subscriber; the follower reads another
// process's log as it grows. It knows nothing of running agents.
package event
