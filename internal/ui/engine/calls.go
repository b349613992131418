package engine

import (
	"encoding/json"
	"sort"
)

// keyArgs is the argument that says most about a call of each tool.
var keyArgs = map[string]string{
	"spawn_teammate": "name",
	"send_message":   "to",
	"broadcast":      "content",
	"bash":           "command",
	"read_file":      "path",
	"write_file":     "path",
	"edit_file":      "path",
}

// CallSummary is a tool call as the conversation shows it: the tool and the
// argument that says most about it ("bash rm notes.txt"); `run` prints it too.
func CallSummary(tool, args string) string {
	if a := KeyArg(tool, args); a != "" {
		return tool + " " + FirstLine(a, 60)
	}
	return tool
}

// KeyArg picks the argument worth showing from a call's JSON arguments.
func KeyArg(tool, args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil || len(m) == 0 {
		return ""
	}
	if k, ok := keyArgs[tool]; ok {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a map's order would make the line flicker between renders
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}
