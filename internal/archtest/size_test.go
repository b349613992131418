package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxPackageLines bounds a package's code (tests aside, lines as wc
// counts them): past it, a package holds more than one idea, and the next
// engineer reads all of it to change a part.
const maxPackageLines = 4200

// maxMethods bounds the methods of one named type (every receiver of it,
// tests aside): past it, a type does several jobs, each of which wants
// a type of its own.
const maxMethods = 25

// codeFiles are the module's Go files other than tests, by package
// directory (relative to the module's root), build tags aside: a file
// for another system counts too.
func codeFiles(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	dirs := map[string][]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() && (fi.Name() == ".git" || fi.Name() == "testdata" || fi.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if fi.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dirs[filepath.ToSlash(rel)] = append(dirs[filepath.ToSlash(rel)], p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func TestPackagesStaySmall(t *testing.T) {
	var bad []string
	for dir, files := range codeFiles(t) {
		n := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n += strings.Count(string(b), "\n")
		}
		if n > maxPackageLines {
			bad = append(bad, dir+": "+strconv.Itoa(n)+" lines")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s, over %d: split it along its seams", b, maxPackageLines)
	}
}

func TestTypesHaveFewMethods(t *testing.T) {
	fset := token.NewFileSet()
	var bad []string
	for dir, files := range codeFiles(t) {
		// A method defined once per system (place_unix.go, place_other.go)
		// is one method: counted by name per type.
		methods := map[string]map[string]bool{}
		for _, p := range files {
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
					continue
				}
				name := receiverName(fd.Recv.List[0].Type)
				if methods[name] == nil {
					methods[name] = map[string]bool{}
				}
				methods[name][fd.Name.Name] = true
			}
		}
		for typ, ms := range methods {
			if len(ms) > maxMethods {
				bad = append(bad, dir+"."+typ+": "+strconv.Itoa(len(ms))+" methods")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s, over %d: give one of its jobs a type of its own", b, maxMethods)
	}
}

// receiverName is the named type of a method's receiver: T of T, *T, T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
