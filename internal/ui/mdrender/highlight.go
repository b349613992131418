package mdrender

import "strings"

// langSpec is what the highlighter knows of a language: its keywords
// (space-separated, with a space at both ends), comment markers and quotes.
// Nothing is built at start-up: specs are plain values picked by a switch.
type langSpec struct {
	keywords string
	line     string // the line comment's marker, "" for none
	hashWord bool   // "#" starts a comment only at a line's start or after a space (shells)
	block    bool   // C-style /* */ comments
	quotes   string
}

const (
	goKeywords = " break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota "
	pyKeywords = " and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self "
	jsKeywords = " async await break case catch class const continue debugger default delete do else enum export extends false finally for from function if implements import in instanceof interface let new null of return static super switch this throw true try type typeof undefined var void while yield "
	rsKeywords = " as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while "
	cKeywords  = " auto break case catch char class const continue default delete do double else enum extern false final float for goto if import int long namespace new null nullptr package private protected public return short signed sizeof static struct switch template this throw true try typedef union unsigned using var void volatile while "
	shKeywords = " if then else elif fi for while until do done case esac in function return export local set unset echo cd exit source "
)

// spec is the language of a code fence's info string, nil if unknown.
func spec(lang string) *langSpec {
	switch lang {
	case "go", "golang":
		return &langSpec{keywords: goKeywords, line: "//", block: true, quotes: "\"'`"}
	case "python", "py", "python3":
		return &langSpec{keywords: pyKeywords, line: "#", quotes: "\"'"}
	case "js", "javascript", "ts", "typescript", "jsx", "tsx", "mjs":
		return &langSpec{keywords: jsKeywords, line: "//", block: true, quotes: "\"'`"}
	case "rust", "rs":
		return &langSpec{keywords: rsKeywords, line: "//", block: true, quotes: "\""}
	case "c", "h", "cpp", "c++", "cc", "java", "cs", "csharp", "kotlin", "kt", "swift":
		return &langSpec{keywords: cKeywords, line: "//", block: true, quotes: "\"'"}
	case "sh", "bash", "shell", "zsh", "console":
		return &langSpec{keywords: shKeywords, line: "#", hashWord: true, quotes: "\"'"}
	case "yaml", "yml", "toml", "ini":
		return &langSpec{line: "#", hashWord: true, quotes: "\"'"}
	case "json", "jsonc":
		return &langSpec{line: "//", quotes: "\""}
	}
	return nil
}

// highlight splits one line of code into pieces; inBlock says whether a
// /* */ comment is open at its start, and is returned for the next line.
func highlight(ls *langSpec, line string, inBlock bool) ([]piece, bool) {
	if ls == nil {
		return []piece{{text: line, st: stCodeBlock}}, false
	}
	var pieces []piece
	plainFrom := 0
	push := func(from, to int, st style) {
		if plainFrom < from {
			pieces = append(pieces, piece{text: line[plainFrom:from], st: stCodeBlock})
		}
		if to > from {
			pieces = append(pieces, piece{text: line[from:to], st: st})
		}
		plainFrom = to
	}
	i := 0
	if inBlock {
		end := strings.Index(line, "*/")
		if end < 0 {
			return []piece{{text: line, st: stComment}}, true
		}
		push(0, end+2, stComment)
		i = end + 2
	}
	for i < len(line) {
		c := line[i]
		switch {
		case ls.line != "" && strings.HasPrefix(line[i:], ls.line) && (!ls.hashWord || i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			push(i, len(line), stComment)
			return pieces, false
		case ls.block && strings.HasPrefix(line[i:], "/*"):
			end := strings.Index(line[i+2:], "*/")
			if end < 0 {
				push(i, len(line), stComment)
				return pieces, true
			}
			push(i, i+2+end+2, stComment)
			i += end + 4
		case strings.IndexByte(ls.quotes, c) >= 0:
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			push(i, j, stString)
			i = j
		case c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z':
			j := i + 1
			for j < len(line) && (line[j] == '_' || line[j]|0x20 >= 'a' && line[j]|0x20 <= 'z' || line[j] >= '0' && line[j] <= '9') {
				j++
			}
			if j-i <= 12 && strings.Contains(ls.keywords, " "+line[i:j]+" ") {
				push(i, j, stKeyword)
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(line) && (line[i] == '_' || line[i]|0x20 >= 'a' && line[i]|0x20 <= 'z' || line[i] >= '0' && line[i] <= '9') {
				i++
			}
		default:
			i++
		}
	}
	push(len(line), len(line), stCodeBlock)
	return pieces, false
}
