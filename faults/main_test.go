package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/leafid/leaf/store/storetest"
)

// Environment read by the suite.
const (
	// envLevel selects the size of the scenarios: "short" or "full".
	// Unset, every test skips.
	envLevel = "LEAF_FAULTS"
	// envGaleraRuns repeats the load phase of TestGalera (default 1).
	envGaleraRuns = "LEAF_GALERA_RUNS"
	// envGaleraCrashes is how many times TestCrashGalera crashes each
	// cluster (default 3).
	envGaleraCrashes = "LEAF_GALERA_CRASHES"
	// envLogs, when set, names a directory that keeps the whole log of
	// every instance, one file per instance and test.
	envLogs = "LEAF_FAULTS_LOGS"
	// envAlertsAfter, a duration (16m), keeps the load of TestAlerts on
	// that long after the database is back, to watch the alerts that
	// outlive an outage (default 0).
	envAlertsAfter = "LEAF_FAULTS_ALERTS_AFTER"
	// envMatrix, set to "all", runs every kind of id of TestMatrix on
	// every shape, not only those matrixToday lists.
	envMatrix = "LEAF_MATRIX"
)

// buildTimeout bounds the build of the leaf binary.
const buildTimeout = 5 * time.Minute

var (
	// level is "short", "full", or "" when the suite does not run.
	level string
	// leafBin is the leaf binary built by TestMain.
	leafBin string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	level = os.Getenv(envLevel)
	switch level {
	case "":
	case "short", "full":
		dir, err := os.MkdirTemp("", "leaf-faults-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "faults: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if leafBin, err = build(dir); err != nil {
			fmt.Fprintf(os.Stderr, "faults: %v\n", err)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "faults: %s=%q: want short or full\n", envLevel, level)
		return 2
	}
	defer printMissed()
	return storetest.Main(m)
}

// build compiles ./cmd/leaf into dir, as a normal build: no race detector,
// no coverage, so that the timings measured are those users get.
func build(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command, to build leaf: %w", err)
	}
	bin := filepath.Join(dir, "leaf")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/leaf")
	cmd.Dir = ".." // the module's root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/leaf: %v\n%s", err, out)
	}
	return bin, nil
}

// requireSuite skips tb unless the suite was asked for.
func requireSuite(tb testing.TB) {
	tb.Helper()
	if level == "" {
		tb.Skipf("fault suite: runs only with %s=short or %s=full (make faults-short, make faults): "+
			"it starts real leaf processes and MariaDB servers and takes minutes", envLevel, envLevel)
	}
}

// sized picks the short or the full size of a scenario.
func sized[T any](short, full T) T {
	if level == "full" {
		return full
	}
	return short
}
