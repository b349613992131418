package openaiwire

import "encoding/json"

// Quirks are real servers' departures from OpenAI's wire format, played
// back so that tests meet the bytes those servers send. The zero
// value is OpenAI's own format.
type Quirks struct {
	// NoIDs sends tool calls without an id (Gemini through some proxies, older Ollama).
	NoIDs bool
	// WholeCalls streams each tool call whole, in one chunk.
	WholeCalls bool
	// NoIndex streams tool-call deltas without "index".
	NoIndex bool
	// ArgsAsObject writes "arguments" as a JSON object, not a string (llama.cpp).
	ArgsAsObject bool
	// ReasoningField names the field that carries Completion.Reasoning:
	// "reasoning_content" (DeepSeek, the default) or "reasoning" (OpenRouter, vLLM).
	ReasoningField string
	// UsageInXGroq puts the usage only in "x_groq": {"usage": …} (Groq).
	UsageInXGroq bool
	// FinishLength cuts the last tool call's arguments in half and ends with
	// finish_reason "length", as a server does at its output limit.
	FinishLength bool
	// AzureFilters adds Azure OpenAI's content filter annotations: a first
	// chunk with no choices and only prompt_filter_results, the filter's
	// results on every choice, and a last annotation chunk without a delta
	// (the asynchronous filter); prompt_filter_results in a whole answer.
	AzureFilters bool
	// ContentFilter cuts the content in half and ends with finish_reason
	// "content_filter", as Azure's filter does to a reply it stops.
	ContentFilter bool

	// The rest shape streams only.

	// KeepAlives sends that many SSE comment lines (KeepAlive, default
	// ": OPENROUTER PROCESSING") before the first chunk.
	KeepAlives int
	KeepAlive  string
	// NoDone sends no [DONE] and keeps the connection open until the client
	// leaves (WriteStream returns when ctx ends).
	NoDone bool
	// NoFinish ends the stream cleanly after the deltas, with neither a
	// finish_reason nor [DONE].
	NoFinish bool
	// StallAfter, when > 0, writes nothing after that many data chunks until
	// the client leaves.
	StallAfter int
	// MultiLineData writes each chunk's JSON indented over several data:
	// lines, which the SSE spec joins with "\n" into one event.
	MultiLineData bool
	// InBandError, when set, follows the content with OpenRouter's mid-stream
	// error chunk (a top-level "error" and finish_reason "error"), then [DONE].
	InBandError *InBandError
}

// InBandError is the error of an in-band error chunk.
type InBandError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// ExtraContent carries Gemini's thought signature on a tool call.
type ExtraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google"`
}

func (q Quirks) reasoningField() string {
	if q.ReasoningField == "" {
		return "reasoning_content"
	}
	return q.ReasoningField
}

// Azure's content filter annotations, as its service writes them.
const (
	azureSafe     = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`
	azureFiltered = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}`
	azurePrompt   = `[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]`
)

// filterResults is the content_filter_results of a choice; nil without AzureFilters.
func (q Quirks) filterResults(last bool) json.RawMessage {
	switch {
	case !q.AzureFilters && !(q.ContentFilter && last):
		return nil
	case q.ContentFilter && last:
		return json.RawMessage(azureFiltered)
	}
	return json.RawMessage(azureSafe)
}

// promptFilterResults is the prompt_filter_results of an answer; nil without AzureFilters.
func (q Quirks) promptFilterResults() json.RawMessage {
	if !q.AzureFilters {
		return nil
	}
	return json.RawMessage(azurePrompt)
}
