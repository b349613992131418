package openaiwire

import (
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// A long conversation: 200 tool rounds.
func BenchmarkValidateMessages(b *testing.B) {
	msgs := []openai.ChatCompletionMessage{sys("s"), user("go")}
	for i := range 200 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, calls(id), toolRes(id, "ok"))
	}
	for b.Loop() {
		if err := ValidateMessages(msgs); err != nil {
			b.Fatal(err)
		}
	}
}
