package llm

import "testing"

// TestCompletionsURL: the path goes before a query the base URL carries
// (Azure's ?api-version=), and the config's query is added to it.
func TestCompletionsURL(t *testing.T) {
	for _, tc := range []struct {
		base  string
		query map[string]string
		want  string
	}{
		{"https://api.openai.com/v1", nil, "https://api.openai.com/v1/chat/completions"},
		{"https://api.openai.com/v1/", nil, "https://api.openai.com/v1/chat/completions"},
		{"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", nil,
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/openai/deployments/d", map[string]string{"api-version": "2024-10-21"},
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/openai/deployments/d?api-version=old", map[string]string{"api-version": "new"},
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=new"},
	} {
		if got := completionsURL(tc.base, tc.query); got != tc.want {
			t.Errorf("completionsURL(%q, %v) = %q, want %q", tc.base, tc.query, got, tc.want)
		}
	}
}
