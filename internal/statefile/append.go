package statefile

import "fmt"

// AppendLine appends data and a trailing '\n' (unless present) to path in one
// write call under Lock(path), so concurrent writers never interleave lines.
// The append descriptor stays open between calls (O_APPEND puts every write
// at the current end, whoever else wrote meanwhile); a file removed or
// replaced since is noticed and opened anew.
func AppendLine(path string, data []byte) error {
	h, err := Hold(path)
	if err != nil {
		return err
	}
	defer h.Unlock()
	if err := h.AppendLine(data); err != nil {
		return fmt.Errorf("append: %w", err) // the error names the path already
	}
	return nil
}
