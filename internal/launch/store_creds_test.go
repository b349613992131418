package launch

import (
	"context"
	"net"
	"testing"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
)

// A client that gives no credentials uses those serve made in its state
// directory only for a server on this host: every address of the URL
// loopback or one of this host's own, never a name, never elsewhere.
func TestLocalCredsOnlyForThisHost(t *testing.T) {
	state := t.TempDir()
	dir, err := natsconn.CredsDir(func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := natsserver.MakeCreds(natsconn.CredsFile(dir, "")); err != nil {
		t.Fatal(err)
	}
	g := &GlobalOptions{Getenv: func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }}
	cases := map[string]bool{
		"nats://127.0.0.1:4222/alpha":                true,
		"nats://localhost:4222/alpha":                true,
		"nats://[::1]:4222/alpha":                    true,
		"nats://127.0.0.1:4222,127.0.0.2:4222/alpha": true,
		"nats://127.0.0.1:4222,192.0.2.1:4222/alpha": false,
		"nats://192.0.2.1:4222/alpha":                false,
		"nats://nats.example.com:4222/alpha":         false,
		"nats://someone:pw@127.0.0.1:4222/alpha":     false,
		"nats://0.0.0.0:4222/alpha":                  false,
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				cases["nats://"+n.IP.String()+":4222/alpha"] = true
				break
			}
		}
	}
	for raw, want := range cases {
		spec, err := ParseStore(raw)
		if err != nil {
			t.Fatal(err)
		}
		o, err := localCreds(g, spec, natsconn.ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.NKeySeed != "" && o.Found; got != want {
			t.Errorf("%s: credentials used %v, want %v", raw, got, want)
		}
	}
}

// Credentials found on this host, not given, are left out for a server
// that asks none (serve --insecure, an embedded test server): nats.go
// refuses to offer an nkey to a server that sends no nonce.
func TestFoundCredentialsAreLeftOutForAServerThatAsksNone(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	state := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": state}
	dir, err := natsconn.CredsDir(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := natsserver.MakeCreds(natsconn.CredsFile(dir, "")); err != nil {
		t.Fatal(err)
	}
	spec, err := ParseStore(s.ClientURL() + "/alpha")
	if err != nil {
		t.Fatal(err)
	}
	g := &GlobalOptions{Getenv: func(k string) string { return env[k] }}
	nc, err := connectNATS(context.Background(), g, spec, nil)
	if err != nil {
		t.Fatalf("a server that asks no credentials, with credentials found: %v", err)
	}
	nc.Close()
}
