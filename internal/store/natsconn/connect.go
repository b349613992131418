package natsconn

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// DefaultDialTimeout bounds how long Connect waits for a server to answer.
const DefaultDialTimeout = 5 * time.Second

// The environment variables a client's credentials and TLS files come from
// (never the config file: it may be committed).
const (
	EnvCreds    = "AGENTTEAM_NATS_CREDS"
	EnvUser     = "AGENTTEAM_NATS_USER"
	EnvPassword = "AGENTTEAM_NATS_PASSWORD"
	EnvCA       = "AGENTTEAM_NATS_CA"
	EnvCert     = "AGENTTEAM_NATS_CERT"
	EnvKey      = "AGENTTEAM_NATS_KEY"
)

// ConnectOptions are a client's credentials and TLS files.
type ConnectOptions struct {
	// User and Password, or NKeySeed (an nkey user seed, "SU…"), or none.
	User, Password string
	NKeySeed       string
	// CredsFrom says where the credentials came from, for error sentences
	// ("the file /x/team.creds"); it never holds a secret.
	CredsFrom string
	// Found says the credentials were found on this host, not given: a
	// server that asks for none takes the client without them.
	Found bool
	// CA verifies the server's certificate; Cert and Key are the client's
	// own, for a server that asks for one.
	CA, Cert, Key string
	// DialTimeout bounds the wait for the server (0: DefaultDialTimeout).
	DialTimeout time.Duration
	// Name is the connection's name, shown in the server's monitoring.
	Name string
	// Refused, when not nil, is told of each request the server refused
	// for lack of permission (the request itself only times out) that the
	// call which made it does not watch for.
	Refused func(error)
}

// ConnectOptionsFromEnv reads a client's credentials and TLS files from
// the environment: AGENTTEAM_NATS_CREDS (a file), or AGENTTEAM_NATS_USER
// and AGENTTEAM_NATS_PASSWORD; AGENTTEAM_NATS_CA, _CERT and _KEY.
func ConnectOptionsFromEnv(getenv func(string) string) (ConnectOptions, error) {
	o := ConnectOptions{CA: getenv(EnvCA), Cert: getenv(EnvCert), Key: getenv(EnvKey)}
	creds, user, pass := getenv(EnvCreds), getenv(EnvUser), getenv(EnvPassword)
	switch {
	case creds != "" && (user != "" || pass != ""):
		return o, fmt.Errorf("both %s and %s/%s are set: keep one", EnvCreds, EnvUser, EnvPassword)
	case creds != "":
		f, err := ReadCredsFile(creds)
		if err != nil {
			return o, err
		}
		f.CA, f.Cert, f.Key = o.CA, o.Cert, o.Key
		return f, nil
	case (user == "") != (pass == ""):
		return o, fmt.Errorf("%s and %s go together: one is set without the other", EnvUser, EnvPassword)
	case user != "":
		o.User, o.Password, o.CredsFrom = user, pass, "user "+user+" of "+EnvUser
	}
	return o, nil
}

// ReadCredsFile reads a client's credentials file: its first line that is
// neither empty nor a # comment is an nkey user seed (SU…) or "USER
// PASSWORD". A file others may read is refused, as ssh refuses a key.
func ReadCredsFile(path string) (ConnectOptions, error) {
	o := ConnectOptions{CredsFrom: "the credentials file " + path}
	fi, err := os.Stat(path)
	if err != nil {
		return o, fmt.Errorf("credentials file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return o, fmt.Errorf("credentials file %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return o, fmt.Errorf("credentials file %s may be read by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return o, fmt.Errorf("credentials file: %w", err)
	}
	line := firstLine(data)
	fields := strings.Fields(line)
	switch {
	case len(fields) == 1 && strings.HasPrefix(fields[0], "SU"):
		if _, err := nkeys.FromSeed([]byte(fields[0])); err != nil {
			return o, fmt.Errorf("credentials file %s: the nkey seed is not valid", path)
		}
		o.NKeySeed = fields[0]
	case len(fields) == 2:
		o.User, o.Password = fields[0], fields[1]
		o.CredsFrom += " (user " + o.User + ")"
	default:
		return o, fmt.Errorf("credentials file %s: want one line, an nkey seed (SU…) or USER PASSWORD", path)
	}
	return o, nil
}

// firstLine is data's first line that is neither blank nor a comment.
func firstLine(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// Connect connects to the NATS server(s) at url (several separated by
// commas) with o's credentials and TLS, waiting at most o.DialTimeout or
// until ctx ends. Each failure is one sentence: no server answers, the
// credentials are refused, TLS fails. The connection reconnects on its
// own when a node of a cluster goes away.
func Connect(ctx context.Context, url string, o ConnectOptions) (*nats.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := o.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	opts := []nats.Option{
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Name(o.Name),
		// The library's default prints to stderr; a violation is seen by
		// the call that caused it.
		nats.ErrorHandler(func(nc *nats.Conn, _ *nats.Subscription, err error) {
			if heardRefusal(nc, err) {
				return
			}
			if o.Refused != nil && errors.Is(err, nats.ErrPermissionViolation) {
				o.Refused(err)
			}
		}),
	}
	switch {
	case o.NKeySeed != "":
		kp, err := nkeys.FromSeed([]byte(o.NKeySeed))
		if err != nil {
			return nil, fmt.Errorf("%s: the nkey seed is not valid", o.credsFrom())
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("%s: the nkey seed is not valid", o.credsFrom())
		}
		opts = append(opts, nats.Nkey(pub, kp.Sign))
	case o.User != "":
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	tlsOpt, err := clientTLS(o)
	if err != nil {
		return nil, err
	}
	if tlsOpt != nil {
		opts = append(opts, nats.Secure(tlsOpt))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil && o.Found && errors.Is(err, nats.ErrNkeysNotSupported) {
		o.NKeySeed, o.User, o.Password, o.CredsFrom, o.Found = "", "", "", "", false
		return Connect(ctx, url, o)
	}
	if err != nil {
		return nil, connectSentence(url, o, err)
	}
	return nc, nil
}

// clientTLS is the TLS config o's files make; nil without any.
func clientTLS(o ConnectOptions) (*tls.Config, error) {
	if o.CA == "" && o.Cert == "" && o.Key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CA != "" {
		pool, err := LoadCA(o.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if o.Cert != "" || o.Key != "" {
		if o.Cert == "" || o.Key == "" {
			return nil, fmt.Errorf("a client certificate needs both %s and %s", EnvCert, EnvKey)
		}
		cert, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s or key %s: %w", o.Cert, o.Key, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (o ConnectOptions) credsFrom() string {
	if o.CredsFrom != "" {
		return o.CredsFrom
	}
	switch {
	case o.NKeySeed != "":
		return "the nkey seed"
	case o.User != "":
		return "user " + o.User
	}
	return "no credentials"
}

// connectSentence turns nats.Connect's error into one sentence.
func connectSentence(raw string, o ConnectOptions, err error) error {
	url := Redact(raw)
	switch {
	case errors.Is(err, nats.ErrAuthorization), strings.Contains(strings.ToLower(err.Error()), "authorization violation"):
		if o.User == "" && o.NKeySeed == "" {
			return fmt.Errorf("the NATS server at %s asks for credentials: set %s to a credentials file (agentteam serve makes one in its user's ~/.local/state/agentteam), or %s and %s: %w",
				url, EnvCreds, EnvUser, EnvPassword, err)
		}
		return fmt.Errorf("the NATS server at %s refused %s: %w", url, o.credsFrom(), err)
	case errors.Is(err, nats.ErrSecureConnRequired):
		return fmt.Errorf("the NATS server at %s asks for TLS: set %s to the CA that signed its certificate: %w", url, EnvCA, err)
	case errors.Is(err, nats.ErrSecureConnWanted) && strings.HasPrefix(raw, "tls://") && o.CA == "" && o.Cert == "":
		return fmt.Errorf("the NATS server at %s does not speak TLS, yet its address asks for it (tls://): use nats:// for a server without TLS: %w", url, err)
	case errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("the NATS server at %s does not speak TLS, yet %s or a client certificate is set: %w", url, EnvCA, err)
	case strings.Contains(err.Error(), "x509"):
		return fmt.Errorf("TLS with the NATS server at %s failed (is %s the CA that signed its certificate?): %w", url, EnvCA, err)
	case strings.Contains(strings.ToLower(err.Error()), "tls"):
		return fmt.Errorf("TLS with the NATS server at %s failed (does it want a client certificate, %s and %s?): %w", url, EnvCert, EnvKey, err)
	case errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("cannot reach the NATS server at %s: nothing answered within %s (is agentteam serve running there?): %w", url, dialTimeout(o), err)
	}
	return fmt.Errorf("connect to the NATS server at %s: %w", url, err)
}

func dialTimeout(o ConnectOptions) time.Duration {
	if o.DialTimeout > 0 {
		return o.DialTimeout
	}
	return DefaultDialTimeout
}

// Redact is a server URL as it may be said: any user and password in it
// are left out.
func Redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(raw, "@") {
			return "the NATS server URL (not shown: it holds credentials)"
		}
		return raw
	}
	u.User = nil
	return u.String()
}

// LoadCA reads a PEM file of CA certificates: the pool a client checks
// its server against, or a server its clients and nodes.
func LoadCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("TLS CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}
