package inbox

import "fmt"

// AppendLine appends data and a trailing '\n' (unless present) to path in one
// write call under Lock(path), so concurrent writers never interleave lines.
// The append descriptor stays open between calls (O_APPEND puts every write
// at the current end, whoever else wrote meanwhile); a file removed or
// replaced since is noticed and opened anew.
func AppendLine(path string, data []byte) error {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		line := make([]byte, len(data)+1)
		copy(line, data)
		line[len(data)] = '\n'
		data = line
	}
	e, err := locks.lock(path)
	if err != nil {
		return err
	}
	defer e.unlock()
	if err := locks.appendLine(e, data); err != nil {
		return fmt.Errorf("append: %w", err) // the error names the path already
	}
	return nil
}

// appendLog is AppendLine for an inbox line, which already ends with '\n'.
func appendLog(path string, data []byte) error {
	e, err := locks.lock(path)
	if err != nil {
		return err
	}
	defer e.unlock()
	return locks.appendLine(e, data)
}
