package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"

	"github.com/leafid/leaf/tlsfiles"
)

// tlsFiles are the certificate this instance serves with (and presents to
// other instances with mutual TLS), and the CA it verifies other
// instances by: each read again when its files change.
type tlsFiles struct {
	cert *tlsfiles.KeyPair
	ca   *tlsfiles.CA // nil: the system's roots
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
	if cfg.PeerMutualTLS && cfg.PeerCA == "" {
		return nil, errors.New("--peer-mtls needs --peer-ca: the CA that verifies the other instances' certificates")
	}
	f := &tlsFiles{mutual: cfg.PeerMutualTLS}
	var err error
	if f.cert, err = tlsfiles.NewKeyPair("--tls-cert and --tls-key", cfg.TLSCert, cfg.TLSKey, log); err != nil {
		return nil, err
	}
	if cfg.PeerCA != "" {
		if f.ca, err = tlsfiles.NewCA("--peer-ca", cfg.PeerCA, log); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// server is the TLS configuration of the listener: the certificate as its
// files are now; with mutual TLS, a client certificate is asked for (and
// checked by trustsPeer, not by the handshake: a caller of the API may
// present none).
func (f *tlsFiles) server() *tls.Config {
	c := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return f.cert.Get(), nil },
	}
	if f.mutual {
		c.ClientAuth = tls.RequestClientCert
	}
	return c
}

// client is the TLS configuration of a call to the instance at host:
// its certificate verified by the CA for host (the address each
// advertises), and with mutual TLS this instance's own presented.
func (f *tlsFiles) client(host string) *tls.Config {
	c := f.ca.Client(host)
	if f.mutual {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return f.cert.Get(), nil }
	}
	return c
}

// trustsPeer says whether a connection's client certificate is another
// instance's: verified by the CA for client authentication.
func (f *tlsFiles) trustsPeer(cs *tls.ConnectionState) bool {
	return cs != nil && len(cs.PeerCertificates) > 0 && f.ca.Verify(cs.PeerCertificates, "", x509.ExtKeyUsageClientAuth) == nil
}
