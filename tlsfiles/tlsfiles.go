// Package tlsfiles reads the files of TLS, a certificate with its key and
// the CA that verifies others, and reads them again when they change, so
// that a renewed certificate or CA is used from the next handshake on,
// without a restart; and it verifies a peer's chain against the CA of the
// moment, which a tls.Config's fixed RootCAs cannot.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Recheck is how often, at most, the files are looked at again (their
// size and time of change).
const Recheck = time.Second

// fileStamp is what says a file changed: its size and its time of change.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(paths []string) ([]fileStamp, error) {
	out := make([]fileStamp, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		out[i] = fileStamp{size: fi.Size(), mod: fi.ModTime()}
	}
	return out, nil
}

// reloaded is what load makes of files, made again when one of them
// changes. A load that fails keeps what was loaded before, and says why in
// the log once per change.
type reloaded[T any] struct {
	what  string // the files, for the log: "--tls-cert and --tls-key"
	paths []string
	load  func() (T, error)
	log   *slog.Logger

	mu      sync.Mutex
	value   T
	stamps  []fileStamp
	checked time.Time
}

// newReloaded loads the files once: an error here is the operator's to
// fix before the server starts.
func newReloaded[T any](what string, paths []string, load func() (T, error), log *slog.Logger) (*reloaded[T], error) {
	if log == nil {
		log = slog.Default()
	}
	r := &reloaded[T]{what: what, paths: paths, load: load, log: log, checked: time.Now()}
	stamps, err := stampOf(paths)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if r.value, err = load(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	r.stamps = stamps
	return r, nil
}

// get is the value of the files as they are now, looked at again at most
// once per Recheck.
func (r *reloaded[T]) get() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < Recheck {
		return r.value
	}
	r.checked = time.Now()
	stamps, err := stampOf(r.paths)
	if err != nil || stampsEqual(stamps, r.stamps) {
		return r.value
	}
	v, err := r.load()
	r.stamps = stamps // a file half written is read again when it changes next
	if err != nil {
		r.log.Warn("TLS: the files changed but could not be read; the ones read before stay in use", "files", r.what, "err", err)
		return r.value
	}
	r.value = v
	r.log.Info("TLS: read again after a change", "files", r.what)
	return v
}

func stampsEqual(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].size != b[i].size || !a[i].mod.Equal(b[i].mod) {
			return false
		}
	}
	return true
}

// KeyPair is a certificate and its key, read again when either changes.
type KeyPair struct{ r *reloaded[*tls.Certificate] }

// NewKeyPair reads certFile (PEM, the chain after it) and keyFile; what
// names them in errors and the log ("--tls-cert and --tls-key").
func NewKeyPair(what, certFile, keyFile string, log *slog.Logger) (*KeyPair, error) {
	r, err := newReloaded(what, []string{certFile, keyFile}, func() (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		return &c, err
	}, log)
	if err != nil {
		return nil, err
	}
	return &KeyPair{r}, nil
}

// Get is the certificate as its files are now.
func (k *KeyPair) Get() *tls.Certificate { return k.r.get() }

// CA is a file of CA certificates (PEM), read again when it changes.
type CA struct{ r *reloaded[*x509.CertPool] }

// NewCA reads file; what names it in errors and the log ("--peer-ca").
func NewCA(what, file string, log *slog.Logger) (*CA, error) {
	r, err := newReloaded(what, []string{file}, func() (*x509.CertPool, error) {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("no PEM certificate in the file")
		}
		return pool, nil
	}, log)
	if err != nil {
		return nil, err
	}
	return &CA{r}, nil
}

// Pool is the CA's certificates as the file is now; a nil CA's is the
// system's roots.
func (c *CA) Pool() (*x509.CertPool, error) {
	if c == nil {
		return x509.SystemCertPool()
	}
	return c.r.get(), nil
}

// Verify verifies certs (the leaf first) against the pool of ca (the
// system's roots for a nil ca), for host unless it is empty, and for the
// use given.
func (c *CA) Verify(certs []*x509.Certificate, host string, use x509.ExtKeyUsage) error {
	if len(certs) == 0 {
		return errors.New("no certificate")
	}
	roots, err := c.Pool()
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, cert := range certs[1:] {
		inter.AddCert(cert)
	}
	_, err = certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host, KeyUsages: []x509.ExtKeyUsage{use}})
	return err
}

// Client is the TLS configuration of a client that verifies the server's
// chain against ca as it is at each handshake, for serverName (a host
// name or an IP address).
func (c *CA) Client(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// RootCAs cannot change while the process runs; the chain is
		// verified here instead, as the handshake would, against the CA
		// of the moment.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if serverName == "" {
				return errors.New("tls: no server name to verify the certificate for")
			}
			return c.Verify(cs.PeerCertificates, serverName, x509.ExtKeyUsageServerAuth)
		},
	}
}
