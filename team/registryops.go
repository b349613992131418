package team

import "github.com/agentteam/agentteam/team/registry"

// changeRegistry applies fn, which fails (if at all) before it changes
// anything, to reg and waits until it is stored; the result is not needed.
func changeRegistry(reg RegistryDoc, fn func(*registry.Config) error) error {
	if c, ok := reg.(registry.Changer); ok {
		return c.Change(fn)
	}
	_, err := reg.Update(fn)
	return err
}

// changeTeammate is Registry.ChangeTeammate on any registry.
func changeTeammate(reg RegistryDoc, name string, fn func(*registry.Member) error) error {
	if r, ok := reg.(interface {
		ChangeTeammate(string, func(*registry.Member) error) error
	}); ok {
		return r.ChangeTeammate(name, fn)
	}
	return changeRegistry(reg, registry.TeammateChange(name, fn))
}

// setStatusNow is SetStatus for a caller that needs no copy of the registry.
func setStatusNow(reg RegistryDoc, name string, status registry.Status, fn func(*registry.Member)) error {
	if r, ok := reg.(interface {
		ChangeStatus(string, registry.Status, func(*registry.Member)) error
	}); ok {
		return r.ChangeStatus(name, status, fn)
	}
	_, err := reg.SetStatus(name, status, fn)
	return err
}
