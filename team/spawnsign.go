package team

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// Spawn requests signed by the lead. Whoever reaches the team's store can
// publish on its work queue; a worker runs only what the team's current
// lead asked for. The lead's process, once it holds the owner lock, makes
// a key pair and claims the lead's sending with the public key in the
// claim (natsstore.Mailbox.ClaimSenderKey); every spawn request it
// publishes carries that claim and a signature made with the private key,
// which never leaves the process. A worker takes a request only if its
// claim is the lead's current one and the signature is that claim's key's:
// a forged request has no such signature, and one of a lead that lost the
// lock names a claim a later lead has replaced.

// leadKeys is a mailbox whose sender claims hold a key (natsstore.Mailbox).
type leadKeys interface {
	ClaimSenderKey(agent string, key []byte) (uint64, error)
	SenderClaim(agent string) (claim uint64, key []byte, err error)
}

// leadSigner signs the spawn requests of the lead's process: claim is the
// lead's sender claim that holds key's public half.
type leadSigner struct {
	claim uint64
	key   ed25519.PrivateKey
}

// claimLeadKey makes a key pair and claims the lead's sending with it.
func claimLeadKey(keys leadKeys) (*leadSigner, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	claim, err := keys.ClaimSenderKey(workspace.LeadName, pub)
	if err != nil {
		return nil, err
	}
	return &leadSigner{claim: claim, key: priv}, nil
}

// sign is q with the lead's claim and signature (q itself for a nil signer:
// a team whose store cannot check them).
func (s *leadSigner) sign(q hosts.Request) hosts.Request {
	if s == nil {
		return q
	}
	q.LeadClaim = s.claim
	q.Signature = ed25519.Sign(s.key, signedSpawn(q))
	return q
}

// signedSpawn is what a spawn request's signature covers: the request
// without its signature, as JSON, after a line that says what it is.
func signedSpawn(q hosts.Request) []byte {
	q.Signature = nil
	data, _ := json.Marshal(q)
	return append([]byte("agentteam spawn request\n"), data...)
}

// Verify checks that q was signed by the team's current lead. It
// returns a *hosts.UnsignedError when it was not, another error when the
// lead's claim could not be read (try again later), and nil when it was
// or when this team's store keeps no keys to check it by.
func (h *hosting) Verify(q hosts.Request) error {
	keys, ok := h.t.opts.Mailbox.(leadKeys)
	if !ok {
		return nil
	}
	if q.LeadClaim == 0 || len(q.Signature) == 0 {
		return &hosts.UnsignedError{Why: "it carries no signature of the team's lead"}
	}
	claim, key, err := keys.SenderClaim(workspace.LeadName)
	if err != nil {
		return err
	}
	if claim != q.LeadClaim {
		return &hosts.UnsignedError{Why: "it is signed for a lead claim that is not the team's current one"}
	}
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(key), signedSpawn(q), q.Signature) {
		return &hosts.UnsignedError{Why: "its signature is not the team's current lead's"}
	}
	return nil
}

// Refuse fails, for want of the lead's signature, the registry entry that
// waits for request q (if one does) and says why.
func (h *hosting) Refuse(q hosts.Request, why error) {
	t := h.t
	err := fmt.Errorf("worker %s refused the spawn of %s: %w", h.opts.ID, q.Name, why)
	t.events.Emit(event.Event{Agent: q.Name, Payload: failure(event.ClassInternal, "", err)})
	var failed bool
	cerr := changeTeammate(t.reg, q.Name, func(m *registry.Member) error {
		failed = false
		if m.SpawnID != q.ID || m.Status != registry.StatusQueued || m.Worker != "" {
			return statefile.ErrNoChange
		}
		m.Status, m.Error, m.UpdatedAt = registry.StatusFailed, err.Error(), time.Now().UTC()
		failed = true
		return nil
	})
	if cerr != nil && !errors.As(cerr, new(registry.NoTeammateError)) {
		t.events.Emit(event.Event{Agent: q.Name, Payload: failure(event.ClassRegistry, "mark the refused spawn failed: ", cerr)})
	}
	if failed {
		t.events.Emit(event.Event{Agent: q.Name, Payload: event.StatusChanged{Role: q.Role, Status: registry.StatusFailed, Reason: err.Error(), PID: t.pid}})
	}
}

// publish signs req as the lead's and puts it on the work queue.
func (h *hosting) publish(ctx context.Context, req hosts.Request) error {
	data, err := json.Marshal(h.t.leadSign.sign(req))
	if err != nil {
		return err
	}
	return h.queue.Publish(ctx, req.ID, data)
}
