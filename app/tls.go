package app

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

// recheckFiles is how often, at most, the files of a certificate or of a
// CA are looked at again (their size and time of change): a renewed
// certificate is used from the first handshake after it, without a
// restart.
const recheckFiles = time.Second

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
	what  string // for the log: "--tls-cert and --tls-key"
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
// once per recheckFiles.
func (r *reloaded[T]) get() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < recheckFiles {
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
	for i := range a {
		if a[i].size != b[i].size || !a[i].mod.Equal(b[i].mod) {
			return false
		}
	}
	return len(a) == len(b)
}

// tlsFiles are the certificate this instance serves with (and presents to
// other instances with mutual TLS), and the CA it verifies other
// instances by: each read again when its files change.
type tlsFiles struct {
	cert *reloaded[*tls.Certificate]
	ca   *reloaded[*x509.CertPool] // nil: the system's roots
	// mutual: instances present their certificate to each other, and a
	// forwarded call is taken for one only from a certificate ca verifies.
	mutual bool
}

// openTLS reads the files cfg names; nil when the instance serves
// plaintext.
func openTLS(cfg Config, log *slog.Logger) (*tlsFiles, error) {
	if cfg.TLSCert == "" {
		if cfg.PeerCA != "" || cfg.PeerMutualTLS {
			return nil, errors.New("--peer-ca and --peer-mtls need --tls-cert and --tls-key: instances speak TLS to each other only where they serve it")
		}
		return nil, nil
	}
	f := &tlsFiles{mutual: cfg.PeerMutualTLS}
	var err error
	f.cert, err = newReloaded("--tls-cert and --tls-key", []string{cfg.TLSCert, cfg.TLSKey}, func() (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		return &c, err
	}, log)
	if err != nil {
		return nil, err
	}
	if cfg.PeerCA != "" {
		f.ca, err = newReloaded("--peer-ca", []string{cfg.PeerCA}, func() (*x509.CertPool, error) {
			pem, err := os.ReadFile(cfg.PeerCA)
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
	} else if cfg.PeerMutualTLS {
		return nil, errors.New("--peer-mtls needs --peer-ca: the CA that verifies the other instances' certificates")
	}
	return f, nil
}

// roots is the pool other instances' certificates are verified by: the
// CA of --peer-ca, else the system's.
func (f *tlsFiles) roots() (*x509.CertPool, error) {
	if f.ca == nil {
		return x509.SystemCertPool()
	}
	return f.ca.get(), nil
}

// server is the TLS configuration of the listener: the certificate as its
// files are now; with mutual TLS, a client certificate is asked for (and
// checked by trustsPeer, not by the handshake: a caller of the API may
// present none).
func (f *tlsFiles) server() *tls.Config {
	c := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return f.cert.get(), nil },
	}
	if f.mutual {
		c.ClientAuth = tls.RequestClientCert
	}
	return c
}

// client is the TLS configuration of the calls to other instances: their
// certificate verified by roots for the host they are reached at (the
// address each advertises), and with mutual TLS this instance's own
// presented.
func (f *tlsFiles) client() *tls.Config {
	c := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The roots may change while the process runs (--peer-ca read
		// again), which RootCAs cannot: the chain is verified below, as
		// the handshake would, against the roots of the moment.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			roots, err := f.roots()
			if err != nil {
				return err
			}
			return verifyChain(cs.PeerCertificates, roots, cs.ServerName, x509.ExtKeyUsageServerAuth)
		},
	}
	if f.mutual {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return f.cert.get(), nil }
	}
	return c
}

// trustsPeer says whether a connection's client certificate is another
// instance's: verified by roots for client authentication.
func (f *tlsFiles) trustsPeer(cs *tls.ConnectionState) bool {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return false
	}
	roots, err := f.roots()
	return err == nil && verifyChain(cs.PeerCertificates, roots, "", x509.ExtKeyUsageClientAuth) == nil
}

// verifyChain verifies certs (the leaf first) against roots, for host
// unless it is empty, and for the use given.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, host string, use x509.ExtKeyUsage) error {
	if len(certs) == 0 {
		return errors.New("no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host, KeyUsages: []x509.ExtKeyUsage{use}})
	return err
}
