package team

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/registry"
)

// The registry is rewritten on every status change; these isolate that
// cost at the orchestration benchmark's size, CPU and wall apart (an fsync
// waits without burning CPU).

func seedRegistry200(b *testing.B) *registry.Registry {
	b.Helper()
	reg := registry.NewRegistry(filepath.Join(b.TempDir(), "config.json"), "")
	now := time.Now().UTC()
	err := reg.Change(b.Context(), func(c *registry.Config) error {
		for i := range orchTeammates {
			c.Teammates = append(c.Teammates, registry.Member{Name: fmt.Sprintf("w%03d", i), Role: "worker",
				Status: registry.StatusIdle, CreatedAt: now.Add(time.Duration(i)), UpdatedAt: now, PID: os.Getpid()})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// reportCPU adds CPU per op measured from the process's rusage.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

// BenchmarkRegistrySetStatus200: one status change with 200 members registered.
func BenchmarkRegistrySetStatus200(b *testing.B) {
	reg := seedRegistry200(b)
	statuses := []registry.Status{registry.StatusQueued, registry.StatusWorking, registry.StatusIdle}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		if err := reg.ChangeStatus(b.Context(), fmt.Sprintf("w%03d", i%orchTeammates), statuses[i%3], nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0)
	if fi, err := os.Stat(reg.Path()); err == nil {
		b.ReportMetric(float64(fi.Size())/1024, "file-KB")
	}
}

// BenchmarkRegistryRead200: what every send_message pays to check its recipient.
func BenchmarkRegistryRead200(b *testing.B) {
	reg := seedRegistry200(b)
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		if _, err := reg.Read(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0)
}

// BenchmarkRegistryWriteAtomic200 is only the durable replace of the 200-member file.
func BenchmarkRegistryWriteAtomic200(b *testing.B) {
	data := registryBytes(b)
	path := filepath.Join(b.TempDir(), "config.json")
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		if err := statefile.WriteFileAtomic(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0)
}

// BenchmarkRegistryWriteNoSync200 is the same replace without the two
// fsyncs: what durability costs, for comparison only.
func BenchmarkRegistryWriteNoSync200(b *testing.B) {
	data := registryBytes(b)
	dir := b.TempDir()
	path := filepath.Join(dir, "config.json")
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		tmp, err := os.CreateTemp(dir, "config.json.tmp-*")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tmp.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := tmp.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0)
}

func registryBytes(b *testing.B) []byte {
	b.Helper()
	c, err := seedRegistry200(b).Read(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return data
}
