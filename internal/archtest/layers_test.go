// Package archtest checks the shape of the module: which package may
// import which. It holds tests only.
package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentteam/agentteam"

// layers gives each package of the module its layer; a package imports
// only packages of lower layers (data flows one way: cmd → team → loop →
// tools → inbox/workspace, with internal/ beside each). A new package
// must be given one here.
var layers = map[string]int{
	// The program and the commands.
	"":    15,
	"cmd": 14,
	// What the commands share.
	"internal/launch":  11, // a team command's flags, config, stores and models
	"internal/exit":    0,  // exit codes and the hard stops
	"internal/permask": 12, // the permission asks that wait for the person
	// Programs that measure the commands, and test-only packages.
	"internal/bench/peerbench":  16,
	"internal/bench/storebench": 16,
	"internal/store/failover":   16,
	"internal/bench/startbench": 0,
	"internal/bench/benchproc":  0,
	"internal/testutil/testfs":  0,
	"internal/testutil/testkit": 0,
	"internal/testutil/testgit": 3,
	"internal/testutil/testpki": 0, // a throwaway CA and certificates for TLS tests
	"internal/llm/fakellm":      1,
	"internal/store/storetest":  3,
	"internal/archtest":         0,
	// What a person sees.
	"internal/ui/tui":        13,
	"internal/ui/tui/draw":   11, // styles and cell-exact lines, what every pane draws with
	"internal/ui/tui/atpath": 12, // @path completion and attachments, read beneath the workspace
	"internal/ui/tui/poll":   11, // the inboxes and registry looked at off Update
	"internal/ui/tui/picker": 11, // chat --resume's list of sessions
	"internal/ui/tui/panel":  12, // the team panel, the feed and the progress of work
	"internal/ui/tui/bridge": 11, // the team's events to the screen, debounced, never blocking
	"internal/ui/linechat":   12,
	"internal/ui/engine":     11, // what both chats ask of the team
	"internal/ui/progress":   12, // the events as run prints them
	"internal/ui/mdrender":   0,
	"internal/ui/termbg":     0,
	"internal/llm/demo":      1,
	// The team and its parts.
	"team":              10,
	"team/event":        6, // the events, their JSON and sentences: what the views read
	"team/board":        3,
	"team/registry":     3, // the registry document and its stores
	"team/worktree":     7, // the teammates' git worktrees
	"team/protocol":     7, // the protocol requests: opened, logged, told, closed
	"team/permgate":     8, // each tool call decided, and the asks
	"team/hosts":        9, // this process as one of the team's workers
	"team/handoff":      8, // a task handed over with its context, in steps
	"team/request":      0,
	"team/pool":         0, // how many agents run a model turn at once
	"team/fault":        0, // what stops a team for good, kept and told once
	"team/plugs":        7, // the person's hooks and AGENTS.md files as each agent meets them
	"team/tasks":        8, // the task board as the agents use it: events, hooks, auto-claim
	"team/prompt":       6, // what an agent is told: the system prompts, a failure
	"team/pingpong":     3, // two teammates bouncing the same messages, noticed
	"team/models":       5, // the models, their meters and the budget
	"team/sessions":     3, // the lead's conversations kept in the workspace
	"internal/plug/mcp": 5,
	// An agent's loop and its tools.
	"loop":     5,
	"loop/llm": 4, // the model client: requests, replies, retries
	"tools":    4,
	// What the tools and the team stand on.
	"internal/sys/gitwt":        3,
	"internal/plug/agentsmd":    3,
	"internal/plug/hooks":       1,
	"internal/store/natsserver": 4, // serve's embedded server, its users and roles' permissions
	"internal/store/natsstore":  3,
	"internal/store/natsconn":   2, // a client's credentials, Connect and its refusals
	"inbox":                     2,
	"workspace":                 2,
	"internal/sys/config":       2,
	"internal/sys/sandbox":      1,
	"internal/store/statefile":  1,
	"internal/sys/permission":   0,
	"internal/llm/openaiwire":   0,
}

// against are the imports known to run against the layers, each with why
// it is still there; one that is gone must be taken off the list.
var against = map[string]string{
	"internal/bench/peerbench -> cmd":  "the benchmark runs the commands in its own process",
	"internal/bench/storebench -> cmd": "the benchmark runs the commands in its own process",
}

func TestImportsFollowTheLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	var bad []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		from := rel(f[0])
		lf, ok := layers[from]
		if !ok {
			bad = append(bad, "package "+show(from)+" has no layer in internal/archtest: give it one")
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := rel(imp)
			lt, ok := layers[to]
			if !ok {
				continue // told above, as its own package
			}
			edge := show(from) + " -> " + show(to)
			if _, known := against[edge]; known {
				seen[edge] = true
				continue
			}
			if lt >= lf {
				bad = append(bad, edge+" runs against the layers (layer "+strconv.Itoa(lf)+" imports layer "+strconv.Itoa(lt)+")")
			}
		}
	}
	for edge, why := range against {
		if !seen[edge] {
			bad = append(bad, edge+" is gone: take it off the list of imports against the layers ("+why+")")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

func show(p string) string {
	if p == "" {
		return "main"
	}
	return p
}
