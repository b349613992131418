package inbox

import "fmt"

// AppendLine appends data and a trailing '\n' (unless present) to path in one
// write call under Lock(path), so concurrent writers never interleave lines.
func AppendLine(path string, data []byte) error {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		line := make([]byte, len(data)+1)
		copy(line, data)
		line[len(data)] = '\n'
		data = line
	}
	unlock, err := Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	if err := writeLine(path, data); err != nil {
		return fmt.Errorf("append: %w", err) // the error names the path already
	}
	return nil
}
