// Package loop is one ReAct loop for any agent, lead or teammate.
//
//   - An Agent holds a conversation, takes in its inbox between turns,
//     asks its model (an llm.Model) for a turn, runs the tool calls of the
//     reply, and records every message in its session (a file, or a
//     SessionLog) before the step it belongs to is committed.
//   - The conversation is compacted to the model's context window, known
//     or learned from the server's refusal; a restored conversation is
//     repaired so that every tool call has its answer.
package loop
