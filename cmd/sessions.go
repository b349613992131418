package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/workspace"
)

// SessionsOptions are the inputs of `agentteam sessions [show ID]`.
type SessionsOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	// Show is the session to print whole; empty lists them.
	Show string
	// Name, with NameID, names that session ("" takes its name away).
	Name, NameID string
	naming       bool
	// Grep keeps, of the list, the conversations where this text was said
	// (any case), each with where.
	Grep string
}

// newSessionsCmd builds `agentteam sessions`; runF, when not nil, replaces runSessions.
func newSessionsCmd(g *launch.GlobalOptions, io IOStreams, runF func(*SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{GlobalOptions: g, IO: io}
	run := func() error {
		if runF != nil {
			return runF(opts)
		}
		return runSessions(opts)
	}
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List the lead's conversations: id, time, messages, title (chat --resume ID brings one back)",
		Long: `List the lead's conversations in this workspace: the current one, then each earlier one (archived when
a chat or run started afresh), newest first. The time is the conversation's last message, the title the first
thing you said. agentteam sessions show ID
prints one whole; agentteam chat --resume ID makes it the current conversation again.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error { return run() },
	}
	c.Flags().StringVar(&opts.Grep, "grep", "", "list only the conversations in which TEXT was said (any case), each with the first place")
	c.AddCommand(&cobra.Command{
		Use:   "name ID [NAME]",
		Short: "Give one of the lead's conversations a name, its title from then on (no NAME: take it away)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 {
				return exit.Usagef("name needs a session id (agentteam sessions lists them), then the name")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.NameID, opts.Name, opts.naming = args[0], strings.Join(args[1:], " "), true
			return run()
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "show ID",
		Short: "Print one of the lead's conversations, readable (ID from agentteam sessions, or current)",
		Args:  sessionArgs(1, "show needs one session id (agentteam sessions lists them)"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Show = args[0]
			return run()
		},
	})
	return c
}

// sessionArgs refuses anything but n arguments with one sentence (bad usage).
func sessionArgs(n int, say string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return exit.Usagef("%s", say)
		}
		return nil
	}
}

func runSessions(opts *SessionsOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	if opts.naming {
		if err := sessions.Name(ws, opts.NameID, opts.Name); err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
		return nil
	}
	if opts.Show != "" {
		msgs, err := sessions.Read(ws, opts.Show)
		if err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
		if opts.JSON {
			return sessionsJSON(opts.IO.Out, msgs)
		}
		return printSession(opts.IO.Out, msgs)
	}
	list, err := sessions.List(ws)
	if err != nil {
		return err
	}
	var found map[string]string
	if opts.Grep != "" {
		list, found = grepSessions(ws, list, opts.Grep)
	}
	if opts.JSON {
		if list == nil {
			list = []sessions.Info{}
		}
		return sessionsJSON(opts.IO.Out, list)
	}
	if len(list) == 0 {
		if opts.Grep != "" {
			fmt.Fprintf(opts.IO.Err, "no conversation with the lead in %s says %q\n", ws.Root, opts.Grep)
			return nil
		}
		fmt.Fprintf(opts.IO.Err, "no conversations with the lead in %s yet\n", ws.Root)
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tMESSAGES\tTITLE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.ID, s.Time.Local().Format("2006-01-02 15:04"), s.Messages, s.Title)
		if where, ok := found[s.ID]; ok {
			fmt.Fprintf(tw, "\t\t\t  %s\n", where)
		}
	}
	return tw.Flush()
}

// grepSessions keeps of list the conversations in which text was said, in
// a message or a tool call, any case, with the first place each says it
// (who, and the words around it). One that cannot be read is left out.
func grepSessions(ws *workspace.Workspace, list []sessions.Info, text string) ([]sessions.Info, map[string]string) {
	want := strings.ToLower(text)
	var kept []sessions.Info
	found := map[string]string{}
	for _, s := range list {
		if s.Named && strings.Contains(strings.ToLower(s.Title), want) {
			found[s.ID] = "its name: " + s.Title
			kept = append(kept, s)
			continue
		}
		msgs, err := sessions.Read(ws, s.ID)
		if err != nil {
			continue
		}
	search:
		for _, m := range msgs {
			for _, said := range append([]string{m.Content}, m.Tools...) {
				plain := strings.Join(strings.Fields(sessionPlain(said)), " ")
				if i := strings.Index(strings.ToLower(plain), want); i >= 0 {
					who := map[string]string{"user": "you", "assistant": "lead", "tool": "tool result"}[m.Role]
					if m.Inbox {
						who = "inbox"
					}
					found[s.ID] = who + ": " + around(plain, i, len(want), 60)
					kept = append(kept, s)
					break search
				}
			}
		}
	}
	return kept, found
}

// around is s's match at [i, i+n) with up to room bytes either side, cut
// on rune boundaries and marked where cut.
func around(s string, i, n, room int) string {
	start, end := max(0, i-room), min(len(s), i+n+room)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

func sessionsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printSession writes a conversation as a person reads it: who speaks,
// then what was said, indented; tool calls and results shortened.
func printSession(w io.Writer, msgs []sessions.Message) error {
	for i, m := range msgs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		who := map[string]string{"user": "you", "assistant": "lead", "tool": "tool result"}[m.Role]
		if m.Inbox {
			who = "inbox"
		}
		if who == "" {
			who = m.Role
		}
		fmt.Fprintf(w, "── %s\n", who)
		text := m.Content
		if m.Role == "tool" {
			text = sessionCut(text, 400)
		}
		for _, line := range strings.Split(strings.TrimRight(sessionPlain(text), "\n"), "\n") {
			if line != "" || text != "" {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
		for _, tc := range m.Tools {
			fmt.Fprintf(w, "  → %s\n", sessionCut(sessionPlain(tc), 200))
		}
	}
	return nil
}

// sessionPlain drops terminal control characters (a session file may hold
// anything a model wrote), keeping newlines and tabs.
func sessionPlain(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func sessionCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
