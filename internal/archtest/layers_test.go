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
	"":    10,
	"cmd": 9,
	// Programs that measure the commands, and test-only packages.
	"internal/peerbench":  11,
	"internal/storebench": 11,
	"internal/failover":   11,
	"internal/startbench": 0,
	"internal/benchproc":  0,
	"internal/testfs":     0,
	"internal/testkit":    0,
	"internal/fakellm":    1,
	"internal/storetest":  3,
	"internal/archtest":   0,
	// What a person sees.
	"internal/tui":      8,
	"internal/linechat": 8,
	"internal/engine":   7, // what both chats ask of the team
	"internal/mdrender": 0,
	"internal/termbg":   0,
	"internal/demo":     1,
	// The team and its parts.
	"team":         6,
	"team/board":   3,
	"team/request": 0,
	"internal/mcp": 5,
	// An agent's loop and its tools.
	"loop":  5,
	"tools": 4,
	// What the tools and the team stand on.
	"internal/gitwt":      3,
	"internal/agentsmd":   3,
	"internal/hooks":      1,
	"internal/natsstore":  3,
	"inbox":               2,
	"workspace":           2,
	"internal/config":     2,
	"internal/sandbox":    1,
	"internal/statefile":  1,
	"internal/permission": 0,
	"internal/openaiwire": 0,
}

// against are the imports known to run against the layers, each with why
// it is still there; one that is gone must be taken off the list.
var against = map[string]string{
	"internal/peerbench -> cmd":  "the benchmark runs the commands in its own process",
	"internal/storebench -> cmd": "the benchmark runs the commands in its own process",
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
