//go:build pgoprofile

package main

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// Built only with -tags pgoprofile, by scripts/pgo.sh: SIGUSR1 starts a
// CPU profile into the file LEAF_CPU_PROFILE names, SIGUSR2 ends it. The
// profile of a load becomes cmd/leaf/default.pgo, which `go build` uses to
// optimize the binary for that load.
func init() {
	path := os.Getenv("LEAF_CPU_PROFILE")
	if path == "" {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		for s := range sig {
			switch {
			case s == syscall.SIGUSR1 && f == nil:
				var err error
				if f, err = os.Create(path); err != nil {
					f = nil
					continue
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					f.Close()
					f = nil
				}
			case s == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
			}
		}
	}()
}
