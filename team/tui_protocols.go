package team

// OpenPlanRequest is the id of a teammate's plan waiting for review, so the
// person can approve or reject it by the teammate's name.
func (t *Team) OpenPlanRequest(name string) (id string, ok bool) {
	id = t.requests.openFor(RequestPlanApproval, name)
	return id, id != ""
}
