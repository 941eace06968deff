package tlsfiles_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/tlsfiles"
)

// handshake runs a TLS handshake between a server with cert and a client
// with conf, and returns the client's error.
func handshake(t *testing.T, cert *tls.Certificate, conf *tls.Config) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		b, err := ln.Accept()
		if err != nil {
			return
		}
		defer b.Close()
		_ = tls.Server(b, &tls.Config{Certificates: []tls.Certificate{*cert}}).Handshake()
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return tls.Client(a, conf).Handshake()
}

// TestVerifiesForTheHost: a client verifies the server's chain against
// the CA for the host it names, and refuses one for another host, one of
// another CA, and one good only for clients.
func TestVerifiesForTheHost(t *testing.T) {
	ca, other := testkit.NewCA(t), testkit.NewCA(t)
	trust, err := tlsfiles.NewCA("ca", ca.File, nil)
	if err != nil {
		t.Fatal(err)
	}
	load := func(c *testkit.CA, uses ...x509.ExtKeyUsage) *tls.Certificate {
		cert, key, _ := c.Issue(t, "server", uses...)
		kp, err := tlsfiles.NewKeyPair("server", cert, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return kp.Get()
	}
	good := load(ca)
	if err := handshake(t, good, trust.Client("127.0.0.1")); err != nil {
		t.Errorf("the CA's certificate for 127.0.0.1: %v", err)
	}
	if err := handshake(t, good, trust.Client("10.0.0.7")); err == nil {
		t.Error("a certificate for 127.0.0.1 taken for 10.0.0.7")
	}
	if err := handshake(t, good, trust.Client("")); err == nil {
		t.Error("a certificate taken with no name to verify it for")
	}
	if err := handshake(t, load(other), trust.Client("127.0.0.1")); err == nil {
		t.Error("another CA's certificate taken")
	}
	if err := handshake(t, load(ca, x509.ExtKeyUsageClientAuth), trust.Client("127.0.0.1")); err == nil {
		t.Error("a certificate for clients taken from a server")
	}
}

// TestReadAgain: a renewed certificate and a CA replaced are used once
// their files change; a file that cannot be read leaves the last one.
func TestReadAgain(t *testing.T) {
	ca := testkit.NewCA(t)
	cert, key, first := ca.Issue(t, "leaf")
	kp, err := tlsfiles.NewKeyPair("leaf", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		c, err := x509.ParseCertificate(kp.Get().Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return c.SerialNumber.String()
	}
	if got := serial(); got != first.String() {
		t.Fatalf("serial %s, want %s", got, first)
	}
	_, _, second := ca.Issue(t, "leaf")
	testkit.WaitFor(t, 5*time.Second, "the renewed certificate", func() bool { return serial() == second.String() })

	if err := os.WriteFile(cert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tlsfiles.Recheck + 100*time.Millisecond)
	if got := serial(); got != second.String() {
		t.Errorf("after a bad file: serial %s, want the last good one %s", got, second)
	}

	other := testkit.NewCA(t)
	trust, err := tlsfiles.NewCA("ca", ca.File, nil)
	if err != nil {
		t.Fatal(err)
	}
	otherCert, otherKey, _ := other.Issue(t, "server")
	okp, err := tlsfiles.NewKeyPair("server", otherCert, otherKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, okp.Get(), trust.Client("127.0.0.1")); err == nil {
		t.Fatal("another CA's certificate taken before the CA file was replaced")
	}
	pem, err := os.ReadFile(other.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.File, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the replaced CA", func() bool {
		return handshake(t, okp.Get(), trust.Client("127.0.0.1")) == nil
	})
}
