package llm

import (
	"encoding/json"
	"testing"
)

// Arguments sent as a JSON string read as encoding/json reads the string,
// escapes and bad UTF-8 included; an object is kept as its text.
func TestWireArgsReadsAsJSONDoes(t *testing.T) {
	for _, in := range []string{
		`""`, `"{\"path\":\"a\"}"`, `"{\"x\":1}"`, `"plain"`, `"caf\u00e9 \ud83d\ude00"`, `"tab\tnewline\n"`,
		`"caf` + "\xc3\xa9" + `"`, `"bad ` + "\xff\xfe" + ` utf8"`, `"\"`, `"a\\b"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			var a wireArgs
			if json.Unmarshal([]byte(in), &a) == nil {
				t.Errorf("%s: read as %q, though not a JSON string", in, a)
			}
			continue
		}
		var got struct {
			A wireArgs `json:"a"`
		}
		if err := json.Unmarshal([]byte(`{"a":`+in+`}`), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if string(got.A) != want {
			t.Errorf("%s: read %q, want %q", in, got.A, want)
		}
	}
	var obj struct {
		A wireArgs `json:"a"`
	}
	if err := json.Unmarshal([]byte(`{"a":{"command": "ls"}}`), &obj); err != nil || obj.A != `{"command": "ls"}` {
		t.Errorf("object arguments read as %q (%v)", obj.A, err)
	}
}
