package atpath

import (
	"path"
	"strings"
)

// ignoreRule is one line of a .gitignore: a pattern relative to the
// directory of its file (base, "" for the workspace's root).
type ignoreRule struct {
	base     string
	segs     []string // the pattern's parts; "**" matches any number of them
	anchored bool     // the pattern had a slash before its end: it matches from base, not at any depth
	dirOnly  bool     // a trailing slash: directories only
	negate   bool     // "!": a path the rules before excluded is included again
}

// ignoreRules are the rules of the .gitignore files that apply to one
// directory, outermost file first, so that the last match decides.
type ignoreRules []ignoreRule

// parseIgnore reads a .gitignore's text found in base (slash-separated, "" for the root).
func parseIgnore(base, text string) ignoreRules {
	var rules ignoreRules
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line[:len(line)-2], " ") + " "
		} else {
			line = strings.TrimRight(line, " \t")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		switch {
		case strings.HasPrefix(line, "!"):
			r.negate, line = true, line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimLeft(line, "/")
		}
		if line == "" {
			continue
		}
		r.segs = strings.Split(line, "/")
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the last rule that matches rel (slash-separated,
// relative to the workspace's root) excludes it. The caller asks for a
// directory's parents first: git never looks inside an excluded directory.
func (rs ignoreRules) ignored(rel string, isDir bool) bool {
	out := false
	for _, r := range rs {
		if r.dirOnly && !isDir {
			continue
		}
		sub := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			sub = rel[len(r.base)+1:]
		}
		var hit bool
		if r.anchored {
			hit = matchSegs(r.segs, strings.Split(sub, "/"))
		} else {
			hit, _ = path.Match(r.segs[0], path.Base(sub))
		}
		if hit {
			out = !r.negate
		}
	}
	return out
}

// matchSegs matches a path's parts against a pattern's, "**" standing for
// any number of parts (none too).
func matchSegs(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(parts) > 0
			}
			for i := 0; i <= len(parts); i++ {
				if matchSegs(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
