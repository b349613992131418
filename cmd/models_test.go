package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

const modelsKey = "sk-models-test-key-0123456789"

// runModelsAgainst runs `agentteam models` in-process for real against a
// server answering with handler, configured by a user file that names the
// server, the key's variable and an extra header.
func runModelsAgainst(t *testing.T, handler http.HandlerFunc, keySet bool, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	env, ws := configFiles(t, fmt.Sprintf(`[providers.local]
base_url = %q
api_key_env = "M_KEY"
headers = { X-Title = "agentteam" }
`, srv.URL+"/v1"), "")
	if keySet {
		env["M_KEY"] = modelsKey
	}
	var out, errb bytes.Buffer
	root := newRootCmd(IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return env[k] }, rootOpts{})
	root.SetArgs(append([]string{"models", "--workspace", ws}, args...))
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// answer writes status, content type and body.
func answer(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func TestModelsListsTheProvidersModels(t *testing.T) {
	var seen *http.Request
	list := func(w http.ResponseWriter, r *http.Request) {
		seen = r.Clone(context.Background())
		answer(200, "application/json", `{"object":"list","data":[{"id":"qwen3","object":"model"},{"id":"llama3.2","object":"model"},{"id":"qwen3"}]}`)(w, r)
	}
	stdout, stderr, err := runModelsAgainst(t, list, true)
	if err != nil || stdout != "llama3.2\nqwen3\n" || stderr != "" {
		t.Fatalf("models: %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	if seen.Method != http.MethodGet || seen.URL.Path != "/v1/models" ||
		seen.Header.Get("Authorization") != "Bearer "+modelsKey || seen.Header.Get("X-Title") != "agentteam" {
		t.Errorf("the request was %s %s with headers %v", seen.Method, seen.URL.Path, seen.Header)
	}

	stdout, _, err = runModelsAgainst(t, list, true, "--json")
	if err != nil || stdout != `["llama3.2","qwen3"]`+"\n" {
		t.Fatalf("models --json: %v %q", err, stdout)
	}

	stdout, stderr, err = runModelsAgainst(t, answer(200, "application/json", `{"data":[]}`), true)
	if err != nil || stdout != "" || !strings.Contains(stderr, "lists no models") {
		t.Fatalf("empty list: %v %q %q", err, stdout, stderr)
	}
	stdout, _, err = runModelsAgainst(t, answer(200, "application/json", `{"data":[]}`), true, "--json")
	if err != nil || stdout != "[]\n" {
		t.Fatalf("empty list --json: %v %q", err, stdout)
	}
}

// TestModelsSaysWhyItHasNoList: every failure is exit 1 and one sentence
// naming the server, with the server's own words when it gave any, and
// never the key.
func TestModelsSaysWhyItHasNoList(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	cases := []struct {
		name    string
		handler http.HandlerFunc
		noKey   bool
		args    []string
		says    []string
	}{
		{name: "OpenAI's error body, with the key's variable",
			handler: answer(401, "application/json", `{"error":{"message":"Incorrect API key provided: sk-mod***789.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			says:    []string{"answered 401 Unauthorized: Incorrect API key provided: sk-mod***789.", "(the key is taken from M_KEY)"}},
		{name: "no key set",
			handler: answer(401, "application/json", `{"error":"unauthorized"}`), noKey: true,
			says: []string{"answered 401 Unauthorized: unauthorized (M_KEY is not set)"}},
		{name: "a server that repeats the key",
			handler: answer(403, "application/json", `{"error":{"message":"key `+modelsKey+` is disabled"}}`),
			says:    []string{"answered 403 Forbidden: key [key] is disabled"}},
		{name: "vLLM's error",
			handler: answer(404, "application/json", `{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`),
			says:    []string{"answered 404 Not Found: The model does not exist."}},
		{name: "Gemini's array",
			handler: answer(400, "application/json", `[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]`),
			says:    []string{"answered 400 Bad Request: API key not valid. Please pass a valid API key."}},
		{name: "plain text",
			handler: answer(502, "text/plain", "upstream connect error\nmore detail"),
			says:    []string{"answered 502 Bad Gateway: upstream connect error …"}},
		{name: "no body",
			handler: answer(500, "", ""),
			says:    []string{"answered 500 Internal Server Error"}},
		{name: "an HTML error page",
			handler: answer(404, "text/html; charset=utf-8", "<html><body>Not here</body></html>"),
			says:    []string{"answered 404 Not Found with an HTML page, not the API: check the base URL"}},
		{name: "an HTML page with 200 and no content type",
			handler: answer(200, "", "\n<!DOCTYPE html><html></html>"),
			says:    []string{"answered 200 OK with an HTML page, not the API"}},
		{name: "JSON that is not a model list",
			handler: answer(200, "application/json", `{"models":[{"name":"llama3"}]}`),
			says:    []string{`did not answer with a model list (JSON with a "data" array)`}},
		{name: "no answer in time",
			handler: hang, args: []string{"--timeout", "300ms"},
			says: []string{"did not answer within 300ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := runModelsAgainst(t, tc.handler, !tc.noKey, tc.args...)
			if code := exit.Code(err); code != exit.Failure {
				t.Fatalf("exit %d (%v), want %d", code, err, exit.Failure)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "the model server at http://127.0.0.1:") {
				t.Errorf("%q does not name the server first", msg)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			if strings.Contains(msg, modelsKey) || strings.Contains(msg, "\n") || stdout != "" {
				t.Errorf("%q: the key, several lines or output (%q)", msg, stdout)
			}
		})
	}
}

func TestModelsWhenNothingListens(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1"
	srv.Close()
	var out, errb bytes.Buffer
	root := newRootCmd(IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return "" }, rootOpts{})
	root.SetArgs([]string{"models", "--base-url", url, "--workspace", t.TempDir()})
	err := root.ExecuteContext(context.Background())
	if exit.Code(err) != exit.Failure || !strings.Contains(err.Error(), "the model server at "+url+" did not answer: ") ||
		!strings.Contains(err.Error(), "connection refused") || strings.Count(err.Error(), url) != 1 {
		t.Fatalf("models with nothing listening: %v", err)
	}

	for _, args := range [][]string{{"--base-url", "localhost:8080"}, {"--timeout", "0s"}} {
		root := newRootCmd(IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return "" }, rootOpts{})
		root.SetArgs(append([]string{"models", "--workspace", t.TempDir()}, args...))
		if err := root.ExecuteContext(context.Background()); exit.Code(err) != exit.Usage {
			t.Errorf("models %q: %v, want bad usage", args, err)
		}
	}
}

func TestModelsDemo(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd(IOStreams{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}}, func(k string) string { return "" }, rootOpts{})
	root.SetArgs([]string{"models", "--demo", "--workspace", t.TempDir()})
	if err := root.ExecuteContext(context.Background()); err != nil || out.String() != "demo\n" {
		t.Fatalf("models --demo: %v %q", err, out.String())
	}
}
