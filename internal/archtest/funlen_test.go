package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// maxFuncLines bounds a function of the module's code (tests aside): a
// longer one does several things, and its parts want names of their own.
const maxFuncLines = 80

// longFuncs are the functions already over the bound, each with the
// length it may not grow past; one cut below the bound must be taken off
// the list, so it only shrinks.
var longFuncs = map[string]int{
	"cmd/chat.go runChat":                                         118,
	"cmd/run.go runLead":                                          116,
	"cmd/serve.go runServe":                                       90,
	"internal/launch/store.go openNATS":                           90,
	"cmd/worker.go runWorker":                                     96,
	"internal/sys/config/file.go rawFile.check":                   115,
	"internal/ui/mdrender/block.go parseBlocks":                   110,
	"internal/ui/mdrender/inline.go inliner.parse":                129,
	"internal/ui/mdrender/wrap.go wrap":                           82,
	"internal/store/natsstore/read.go Mailbox.Commit":             103,
	"internal/store/natsstore/read.go Mailbox.Watch":              93,
	"internal/bench/storebench/main.go main":                      89,
	"internal/bench/storebench/wakebench.go receiveChild":         81,
	"internal/bench/storebench/workers.go harness.workerScenario": 121,
	"internal/ui/tui/apply.go eventSink.event":                    83,
	"loop/llm/client.go Client.attempt":                           84,
	"loop/cycle.go Agent.cycle":                                   98,
	"loop/llm/sse.go streamReader.read":                           82,
	"team/event/describe.go Event.Sentence":                       84,
	"team/member.go roster.runTeammate":                           88,
	"team/member.go roster.spawn":                                 107,
	"team/resume.go roster.resumeTeammates":                       85,
	"team/team.go open":                                           156,
	"team/worker.go roster.spawnQueued":                           81,
	"workspace/place_unix.go Workspace.Place":                     100,
}

func TestFunctionsStayShort(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var bad []string
	for _, files := range codeFiles(t) {
		for _, p := range files {
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				key := filepath.ToSlash(rel) + " " + funcName(fd)
				ceiling, known := longFuncs[key]
				if known {
					seen[key] = true
				}
				switch {
				case known && n <= maxFuncLines:
					bad = append(bad, key+" is "+strconv.Itoa(n)+" lines now: take it off longFuncs")
				case known && n > ceiling:
					bad = append(bad, key+" grew to "+strconv.Itoa(n)+" lines (at most "+strconv.Itoa(ceiling)+"): cut it instead")
				case !known && n > maxFuncLines:
					bad = append(bad, key+" is "+strconv.Itoa(n)+" lines, over "+strconv.Itoa(maxFuncLines)+": give its parts functions of their own")
				}
			}
		}
	}
	for key := range longFuncs {
		if !seen[key] {
			bad = append(bad, key+" is gone: take it off longFuncs")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// funcName is a function's name, a method's with its receiver's type:
// Model.handleKey.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
