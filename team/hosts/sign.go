package hosts

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"

	"github.com/agentteam/agentteam/inbox"
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

// LeadKeys is a mailbox whose sender claims hold a key (natsstore.Mailbox).
type LeadKeys interface {
	ClaimSenderKey(ctx context.Context, agent string, key []byte) (uint64, error)
	SenderClaim(ctx context.Context, agent string) (claim uint64, key []byte, err error)
}

// Signer signs the spawn requests of the lead's process: claim is the
// lead's sender claim that holds key's public half.
type Signer struct {
	claim uint64
	key   ed25519.PrivateKey
}

// ClaimLeadKey makes a key pair and claims the lead's sending with it.
func ClaimLeadKey(ctx context.Context, keys LeadKeys) (*Signer, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	claim, err := keys.ClaimSenderKey(ctx, inbox.LeadName, pub)
	if err != nil {
		return nil, err
	}
	return &Signer{claim: claim, key: priv}, nil
}

// Sign is q with the lead's claim and signature (q itself for a nil signer:
// a team whose store cannot check them).
func (s *Signer) Sign(q Request) Request {
	if s == nil {
		return q
	}
	q.LeadClaim = s.claim
	q.Signature = ed25519.Sign(s.key, signedSpawn(q))
	return q
}

// Claim is the lead's sender claim the signer's key is held by.
func (s *Signer) Claim() uint64 { return s.claim }

// signedSpawn is what a spawn request's signature covers: the request
// without its signature, as JSON, after a line that says what it is.
func signedSpawn(q Request) []byte {
	q.Signature = nil
	data, _ := json.Marshal(q)
	return append([]byte("agentteam spawn request\n"), data...)
}

// VerifyLead checks that q was signed by the team's current lead, whose
// claim keys holds. It returns an *UnsignedError when it was not, another
// error when the lead's claim could not be read (try again later), and nil
// when it was.
func VerifyLead(ctx context.Context, keys LeadKeys, q Request) error {
	if q.LeadClaim == 0 || len(q.Signature) == 0 {
		return &UnsignedError{Why: "it carries no signature of the team's lead"}
	}
	claim, key, err := keys.SenderClaim(ctx, inbox.LeadName)
	if err != nil {
		return err
	}
	if claim != q.LeadClaim {
		return &UnsignedError{Why: "it is signed for a lead claim that is not the team's current one"}
	}
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(key), signedSpawn(q), q.Signature) {
		return &UnsignedError{Why: "its signature is not the team's current lead's"}
	}
	return nil
}
