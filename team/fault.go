package team

import (
	"errors"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/models"
)

// tellFault is how the subscriber hears of the fault that stopped the team.
func tellFault(events EventSink) func(error) {
	return func(err error) {
		class := event.ClassStorage
		if errors.As(err, new(*models.BudgetError)) {
			class = event.ClassBudget
		}
		events.Notify(event.Event{Payload: event.Failure{Class: class, Text: err.Error()}})
	}
}

// failure is a Failure of a step that err ended; a full or read-only disk
// is a storage failure whatever the step. The text is prefix + err.
func failure(class event.ErrorClass, prefix string, err error) event.Failure {
	if fault.IsStorage(err) {
		class = event.ClassStorage
	}
	return event.Failure{Class: class, Text: prefix + err.Error()}
}

// Halted is closed once a fault stopped the team (a full disk, the owner
// lock lost, the budget spent); Run returns which.
func (t *Team) Halted() <-chan struct{} { return t.faults.Halted() }
