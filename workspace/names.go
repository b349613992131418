package workspace

import "fmt"

// Reserved agent names: the lead's own inbox, and the person at the keyboard.
const (
	LeadName = "lead"
	UserName = "user"
)

// MaxNameLen is the longest agent name.
const MaxNameLen = 32

// ValidateName checks the syntax of any agent name: 1–32 characters
// of [A-Za-z0-9_-], not starting with '-'.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("agent name is empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("agent name %.40q is longer than %d characters", name, MaxNameLen)
	}
	if name[0] == '-' {
		return fmt.Errorf("agent name %q must not start with '-'", name)
	}
	for _, r := range name {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("agent name %q may only contain letters, digits, '_' and '-'", name)
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
		return fmt.Errorf("agent name %q is reserved", name)
	}
	return nil
}
