package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

// executeWorker runs `agentteam worker` with its run function replaced.
func executeWorker(t *testing.T, env map[string]string, args ...string) (*WorkerOptions, error) {
	t.Helper()
	var got *WorkerOptions
	streams := IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	root := newRootCmd(streams, func(k string) string { return env[k] }, rootOpts{
		worker: func(o *WorkerOptions) error { got = o; return nil },
	})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return got, err
}

func TestWorkerFillsItsOptions(t *testing.T) {
	o, err := executeWorker(t, map[string]string{"AGENTTEAM_STORE": "nats://h:4222/alpha", "HOME": t.TempDir()},
		"worker", "--workspace", "/src/app", "--max-workers", "3", "--labels", "gpu,linux", "--labels", "big", "--id", "c-1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Workspace != "/src/app" || o.MaxWorkers != 3 || strings.Join(o.Labels, ",") != "gpu,linux,big" || o.ID != "c-1" ||
		o.Store != "nats://h:4222/alpha" {
		t.Fatalf("worker options: %+v, globals %+v", o, *o.GlobalOptions)
	}
}

// Each bad usage of worker is one sentence and exit 2, before anything
// is opened: no server needed.
func TestWorkerBadUsageIsOneSentence(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--store", "nats://127.0.0.1:1/t", "--labels", "a b"}, `--labels: label "a b"`},
		{[]string{"--store", "nats://127.0.0.1:1/t", "--id", "a.b"}, `--id "a.b"`},
		{[]string{"--store", "nats://127.0.0.1:1/t", "--resume"}, "a worker takes no --resume"},
		{[]string{}, "a worker serves a team on a NATS server"},
		{[]string{"--store", "file"}, "a worker serves a team on a NATS server"},
	} {
		var errb bytes.Buffer
		streams := IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}
		root := newRootCmd(streams, func(k string) string {
			if k == "HOME" {
				return t.TempDir()
			}
			return ""
		}, rootOpts{})
		root.SetArgs(append([]string{"worker", "--workspace", t.TempDir()}, tc.args...))
		err := root.ExecuteContext(context.Background())
		if exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("worker %q: exit %d, %v; want usage saying %q", tc.args, exit.Code(err), err, tc.says)
		}
	}
}
