package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/openaiwire"
)

// decodeChunk must give what json.Unmarshal gives, for every chunk the
// fake's playbacks of real servers send and for hand-made odd ones.
func TestDecodeChunkIsJSONUnmarshal(t *testing.T) {
	payloads := []string{
		`{"id":"x","choices":[{"index":0,"delta":{"content":"done"}}]}`,
		`{"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}]}`,
		` { "id" : "x" , "choices" : [ { "index" : 0 , "delta" : { "content" : "a\"b\\c\u00e9\n" } , "finish_reason" : "stop" } ] } `,
		`{"choices":[{"index":1,"delta":{"content":"second choice"}},{"index":0,"delta":{"content":"first"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"function":{"arguments":"abc"}},{"function":{"name":"x"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"bash","arguments":{"command":"ls"}}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","extra_content":{"google":{"thought_signature":"sig"}},"function":{"name":"f","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"alt"}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
		`{"choices":[],"x_groq":{"id":"req_1","usage":{"total_tokens":7}}}`,
		`{"id":"x","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
		`{"object":"error","message":"bad","code":400}`,
		`{"Choices":[{"Index":0,"Delta":{"Content":"case folded"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"bad utf8 ` + "\xff" + `"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"control ` + "\x01" + `"}}]}`,
		`{"choices":[{"index":0.5,"delta":{}}]}`,
		`{"choices":[{"index":1e2,"delta":{}}]}`,
		`{"choices":[{"index":0,"delta":{"content":[1]}}]}`,
		`{"choices":[{"index":0,"delta":null}]}`,
		`{"choices":null,"created":-1.5e3,"provider":"OpenAI","service_tier":"default"}`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}]`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}]}{}`,
		`[]`, `"text"`, `null`, ``, `{}`, `{"id":{"nested":true},"choices":[]}`, `{"id":true,"model":false}`,
	}
	// Every chunk of the fake's streams, quirks and all.
	for _, q := range []openaiwire.Quirks{{}, {NoIDs: true}, {WholeCalls: true, NoIndex: true}, {ArgsAsObject: true},
		{ReasoningField: "reasoning"}, {UsageInXGroq: true}, {FinishLength: true}, {InBandError: &openaiwire.InBandError{Code: 502, Message: "gone"}}} {
		for _, repeat := range []bool{false, true} {
			c := openaiwire.Completion{Model: "m", Content: "Hello \"world\" <b>&\u2028", Reasoning: "hmm\n",
				ToolCalls: []openai.ToolCall{
					{ID: "c1", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a\\b.txt"}`}},
					{ID: "c2", Function: openai.FunctionCall{Name: "spawn_teammate", Arguments: `{"name":"w001","prompt":"do your part"}`}}},
				Usage: openai.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}}
			rec := httptest.NewRecorder()
			_ = openaiwire.WriteStream(context.Background(), rec, c, openaiwire.StreamOptions{IncludeUsage: true, PieceSize: 3,
				RepeatIndexZero: repeat, IDsInEveryChunk: repeat, Quirks: q})
			sc := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
			for sc.Scan() {
				if p, ok := strings.CutPrefix(sc.Text(), "data: "); ok && p != "[DONE]" {
					payloads = append(payloads, p)
				}
			}
		}
	}
	if len(payloads) < 200 {
		t.Fatalf("only %d payloads", len(payloads))
	}
	for _, p := range payloads {
		var got, want wireChunk
		gotErr := decodeChunk([]byte(p), &got)
		wantErr := json.Unmarshal([]byte(p), &want)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("%s\nerror %v, json.Unmarshal's %v", p, gotErr, wantErr)
			continue
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s\ndecoded %+v\njson.Unmarshal %+v", p, got, want)
		}
	}
	// The hand-made path reads the usual chunks itself, not by falling back.
	for _, p := range payloads[:6] {
		var ch wireChunk
		if parser := (chunkParser{b: []byte(p)}); !parser.chunk(&ch) || !parser.end() {
			t.Errorf("fell back on a usual chunk: %s", p)
		}
	}
}
