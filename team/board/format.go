package board

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// FormatTasks writes tasks as a table: id, status, owner, blocked by, subject.
func FormatTasks(w io.Writer, tasks []Task) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tOWNER\tBLOCKED BY\tSUBJECT")
	for _, t := range tasks {
		owner := t.Owner
		if owner == "" {
			owner = "-"
		}
		subject := t.Subject
		if t.Role != "" {
			subject += " [" + t.Role + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, owner, orNone(t.BlockedBy), subject)
	}
	return tw.Flush()
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}
