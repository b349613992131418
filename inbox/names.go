package inbox

import "fmt"

// Who may have an inbox. One rule for every agent name, kept here so that
// every store, tool and command refuses the same names: a name that is
// one file in a directory is also one token of a NATS subject.

// Reserved agent names: the lead's own inbox, and the person at the keyboard.
const (
	LeadName = "lead"
	UserName = "user"
)

// MaxNameLen is the longest agent name.
const MaxNameLen = 32

// NameError is an agent name refused by ValidateName. It matches
// ErrInvalid (errors.Is), so a store's caller tells it from a failed write.
type NameError struct {
	Name   string
	Reason string // a sentence's end: "is empty", "is reserved", …
}

func (e *NameError) Error() string {
	if e.Name == "" {
		return "agent name " + e.Reason
	}
	return fmt.Sprintf("agent name %.40q %s", e.Name, e.Reason)
}

// Is makes a refused name an ErrInvalid.
func (e *NameError) Is(target error) bool { return target == ErrInvalid }

// ValidateName checks the syntax of any agent name: 1–32 characters
// of [A-Za-z0-9_-], not starting with '-'.
func ValidateName(name string) error {
	if name == "" {
		return &NameError{Reason: "is empty"}
	}
	if len(name) > MaxNameLen {
		return &NameError{Name: name, Reason: fmt.Sprintf("is longer than %d characters", MaxNameLen)}
	}
	if name[0] == '-' {
		return &NameError{Name: name, Reason: "must not start with '-'"}
	}
	for _, r := range name {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return &NameError{Name: name, Reason: "may only contain letters, digits, '_' and '-'"}
		}
	}
	return nil
}

// ValidateTeammateName is ValidateName plus the reserved names, for spawning.
func ValidateTeammateName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if name == LeadName || name == UserName {
		return &NameError{Name: name, Reason: "is reserved"}
	}
	return nil
}
