// Package loop is one ReAct loop for any agent, lead or teammate.
//
//   - An Agent runs cycles: it takes in its inbox between turns, asks its
//     model (an llm.Model) for a turn, runs the tool calls of the reply,
//     and records every message in its session (a file, or a SessionLog)
//     before the step it belongs to is committed.
//   - Its conversation (the messages, the tools and instructions every
//     request carries, the usage, the model's window) is kept under one
//     lock; intake takes the inbox into it, dropping ids already seen.
//   - The conversation is compacted to the model's context window, known
//     or learned from the server's refusal (budget does the reckoning); a
//     restored conversation is repaired so that every tool call has its
//     answer.
package loop
