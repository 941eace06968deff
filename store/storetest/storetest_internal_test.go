package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how require stopped a test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(s server, ci bool) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.require(f, ci)
	}()
	<-done
	return f
}

var noDocker = func() error { return errors.New("no engine") }

func TestNoMySQL(t *testing.T) {
	s := findServer("", "", noDocker, "root@tcp(127.0.0.1:1)/")
	if s.skip == "" || s.err != nil {
		t.Fatalf("findServer = %+v, want a skip", s)
	}
	for _, want := range []string{EnvMySQLDSN, "Docker", "127.0.0.1:3306"} {
		if !strings.Contains(s.skip, want) {
			t.Errorf("skip message %q does not mention %q", s.skip, want)
		}
	}
	if f := run(s, false); f.skipped == "" || f.failed != "" {
		t.Fatalf("without CI: skipped %q, failed %q; want a skip", f.skipped, f.failed)
	}
	if f := run(s, true); f.failed == "" || f.skipped != "" {
		t.Fatalf("with CI: skipped %q, failed %q; want a failure", f.skipped, f.failed)
	}
}

func TestBrokenDSNFails(t *testing.T) {
	docker := func() error {
		t.Error("docker probed although the DSN was set")
		return nil
	}
	s := findServer("user:secret@tcp(127.0.0.1:1)/?timeout=1s", "", docker, LocalMySQLDSN)
	if s.err == nil {
		t.Fatalf("findServer = %+v, want an error", s)
	}
	if f := run(s, false); f.failed == "" {
		t.Fatalf("a configured but broken server skipped (%q) instead of failing", f.skipped)
	}
}

func TestLocalFallback(t *testing.T) {
	s := findServer("", "", noDocker, LocalMySQLDSN)
	if s.skip != "" {
		t.Skip("no local MySQL:", s.skip)
	}
	if s.err != nil || s.admin == nil {
		t.Fatalf("findServer = %+v", s)
	}
	s.admin.Close()
	if f := run(s, true); f.failed != "" || f.skipped != "" {
		t.Fatalf("usable server stopped the test: %q %q", f.failed, f.skipped)
	}
}

// TestImageRequiresDocker: an image named is a container required, so no
// engine is a failure, never the local server in its place.
func TestImageRequiresDocker(t *testing.T) {
	s := findServer("", "leaf-local/mariadb:10.11", noDocker, LocalMySQLDSN)
	if s.err == nil || s.admin != nil {
		t.Fatalf("findServer = %+v, want an error", s)
	}
	for _, want := range []string{EnvMySQLImage, "leaf-local/mariadb:10.11", "no engine"} {
		if !strings.Contains(s.err.Error(), want) {
			t.Errorf("error %q does not mention %q", s.err, want)
		}
	}
	if f := run(s, false); f.failed == "" {
		t.Fatalf("no engine for the image named skipped (%q) instead of failing", f.skipped)
	}
}
