package openaiwire

import openai "github.com/sashabaranov/go-openai"

// EstimateUsage counts tokens roughly (four bytes a token, a few per message),
// enough for tests and the demo to show plausible, growing numbers.
func EstimateUsage(req openai.ChatCompletionRequest, content string, calls []openai.ToolCall) openai.Usage {
	prompt := 0
	for _, m := range req.Messages {
		n := len(m.Content) + len(m.Role)
		for _, p := range m.MultiContent {
			n += len(p.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		prompt += 4 + n/4
	}
	for _, t := range req.Tools {
		if t.Function != nil {
			prompt += 8 + (len(t.Function.Name)+len(t.Function.Description))/4
		}
	}
	completion := 1 + len(content)/4
	for _, tc := range calls {
		completion += 2 + (len(tc.Function.Name)+len(tc.Function.Arguments))/4
	}
	return openai.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}
