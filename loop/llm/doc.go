// Package llm talks to an OpenAI-compatible chat-completions server: one
// request per model turn, its streamed or whole reply, retries, and
// bounds on what a reply may bring.
//
//   - Client is the Model backed by a server: go-openai's types for the
//     request, a lenient reader for what servers send (wire.go, sse.go,
//     chunkjson.go), and the second asks some servers need (no
//     stream_options, max_completion_tokens, Gemini's signatures).
//   - A retry budget per Complete call is shared by the transport (429,
//     5xx, refused connections, Retry-After) and by stream restarts;
//     OnRetry is told of each.
//   - Errors come back as one sentence each, with ErrAuth and
//     ErrContextLength (a ContextError) reachable with errors.Is.
package llm
