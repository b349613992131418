package team

import "github.com/agentteam/agentteam/team/event"

// failure is a Failure of a step that err ended; a full or read-only disk
// is a storage failure whatever the step. The text is prefix + err.
func failure(class event.ErrorClass, prefix string, err error) event.Failure {
	if _, ok := AsStorageError(err).(*StorageError); ok {
		class = event.ClassStorage
	}
	return event.Failure{Class: class, Text: prefix + err.Error()}
}
