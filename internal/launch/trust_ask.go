package launch

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/sys/config"
)

// AskTrust asks the person at a terminal, before the chat starts, whether
// to trust what the project file says that waits for trust; a yes records
// the trust and reads the files again, so this chat applies them. A no is
// not recorded: it leaves them ignored, as the note after says, and the
// next chat asks again. (A network = "on" trusted here is the flag's from
// the next chat on: the flags took the files' values already.)
func AskTrust(g *GlobalOptions, in io.Reader, out io.Writer) error {
	if g.Config == nil || g.Config.Held.IsEmpty() {
		return nil
	}
	p, err := config.ReadProject(g.Getenv, g.Workspace)
	if err != nil || p.Trusted || len(p.Widening) == 0 {
		return nil // the note says what is ignored, and why trust cannot be read
	}
	fmt.Fprintf(out, "The project file %s says:\n", p.Path)
	for _, l := range p.Widening {
		fmt.Fprintf(out, "  %s\n", l)
	}
	fmt.Fprint(out, "These let more run without asking, and apply only if you trust this project. Trust it? [y/N] ")
	if a := strings.ToLower(strings.TrimSpace(readLine(in))); a != "y" && a != "yes" {
		fmt.Fprintln(out, "not trusted (agentteam trust changes that)")
		return nil
	}
	if err := config.Trust(g.Getenv, p); err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	cfg, err := config.Load(config.Options{Workspace: g.Workspace, Getenv: g.Getenv})
	if err != nil {
		return &exit.Error{Code: exit.Usage, Err: err}
	}
	g.Config = cfg
	fmt.Fprintf(out, "trusted %s as it is now\n", p.Path)
	return nil
}

// readLine reads up to a newline a byte at a time, so nothing typed after
// it is taken from the screen that reads next.
func readLine(in io.Reader) string {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 256 {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			break
		}
	}
	return b.String()
}
