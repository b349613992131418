//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/agentteam/agentteam/cmd"
)

const profiledFlag = "-profiled"

// profiled runs agentteam's command line args in this process under the
// CPU profiler, writing the profile to path: the same commands as the
// binary (`run`, `serve`), so that a profile shows where a store's CPU
// goes. SIGTERM ends a serve as it ends the binary's.
func profiled(path string, args []string) int {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		return 1
	}
	defer pprof.StopCPUProfile()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300) // as agentteam's main does
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := cmd.NewRootCmd(cmd.IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, nil)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return cmd.Report(os.Stderr, err)
	}
	return 0
}
