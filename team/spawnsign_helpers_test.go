package team

import (
	"encoding/json"
	"testing"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/team/hosts"
)

// testLead claims the lead's sending on mb as a lead's process does, for
// a test that publishes spawn requests itself.
func testLead(t *testing.T, mb *natsstore.Mailbox) *hosts.Signer {
	t.Helper()
	s, err := hosts.ClaimLeadKey(t.Context(), mb)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedAsLead is req as the team's lead would publish it: signed for a
// lead claim the test makes on mb.
func signedAsLead(t *testing.T, mb *natsstore.Mailbox, req hosts.Request) []byte {
	t.Helper()
	data, err := json.Marshal(testLead(t, mb).Sign(req))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
