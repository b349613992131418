package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Playbacks of Azure OpenAI, LM Studio and LiteLLM, where they differ from
// OpenAI.

// AzureDeployment makes the server answer as an Azure OpenAI deployment:
// at /openai/deployments/NAME/chat/completions only, refusing a request
// without ?api-version=version (404, as Azure does) and, with WithAPIKey,
// one whose key is not in the api-key header (401). URL is then the
// deployment's base URL.
func AzureDeployment(name, version string) Option {
	return func(s *Server) { s.azureDeployment, s.azureVersion = name, version }
}

func (s *Server) azurePath() string { return "/openai/deployments/" + s.azureDeployment }

// azureRefusal is Azure's answer to a request at the wrong URL or with the
// key in the wrong place; nil when the request may go on.
func (s *Server) azureRefusal(r *http.Request) (status int, body string) {
	if got := r.URL.Query().Get("api-version"); got != s.azureVersion {
		return http.StatusNotFound, `{"error":{"code":"404","message":"Resource not found"}}`
	}
	if s.apiKey != "" && !keyIs(r.Header.Get("api-key"), s.apiKey) {
		return http.StatusUnauthorized, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`
	}
	return 0, ""
}

// AzurePromptFiltered is Azure's refusal of a prompt its content filter stopped.
func AzurePromptFiltered() Reply {
	return Reply{Status: http.StatusBadRequest, ContentType: "application/json",
		Body: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}`}
}

// LMStudioError is LM Studio's error answer: HTTP status with {"error": "text"}.
func LMStudioError(status int, msg string) Reply {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return Reply{Status: status, ContentType: "application/json; charset=utf-8", Body: string(b)}
}

// LMStudioContextOverflow is LM Studio's refusal of a conversation longer
// than the context the model was loaded with.
func LMStudioContextOverflow() Reply {
	return LMStudioError(http.StatusBadRequest, "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input.")
}

// LMStudioNoModel is LM Studio's answer when no model is loaded.
func LMStudioNoModel() Reply {
	return Reply{Status: http.StatusNotFound, ContentType: "application/json; charset=utf-8",
		Body: `{"error":{"message":"No models loaded. Please load a model in the developer page or use the ` + "`lms load`" + ` command.","type":"invalid_request_error","param":"model","code":"model_not_found"}}`}
}

// LMStudioStreamError is how LM Studio reports a failure once it has
// answered a streamed request with 200: an SSE "error" event.
func LMStudioStreamError(msg string) Reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg}})
	return Reply{ContentType: "text/event-stream", Body: "event: error\ndata: " + string(b) + "\n\n"}
}

// LiteLLMError is the LiteLLM proxy's error answer: the upstream's words
// behind an exception name, type null, and the HTTP status as a string code.
func LiteLLMError(status int, exception, msg string) Reply {
	return Reply{Status: status, ContentType: "application/json", Body: liteLLMError(status, exception, msg)}
}

func liteLLMError(code int, exception, msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": "litellm." + exception + ": " + msg, "type": nil, "param": nil, "code": fmt.Sprint(code)}})
	return string(b)
}

// LiteLLMMidStreamError is the LiteLLM proxy losing its upstream in the
// middle of a streamed answer: the content so far, then a data line with
// only an error (no choices, code as a string) and no [DONE].
func LiteLLMMidStreamError(sofar string, code int, exception, msg string) Reply {
	var b strings.Builder
	for _, d := range []string{`{"role":"assistant","content":""}`, mustJSON(map[string]string{"content": sofar})} {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-litellm\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
	}
	fmt.Fprintf(&b, "data: %s\n\n", liteLLMError(code, exception, msg))
	return Reply{ContentType: "text/event-stream", Body: b.String()}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
