package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority of a test's own: it issues certificates
// for 127.0.0.1, and File is its certificate as a PEM file.
type CA struct {
	File string
	Pool *x509.CertPool
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

var serials atomic.Int64

// NewCA makes a CA in a directory of tb's.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	ca := &CA{dir: tb.TempDir()}
	ca.key = newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serials.Add(1)),
		Subject:               pkix.Name{CommonName: "leaf test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ca.key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		tb.Fatal(err)
	}
	ca.Pool = x509.NewCertPool()
	ca.Pool.AddCert(ca.cert)
	ca.File = filepath.Join(ca.dir, "ca.pem")
	writePEM(tb, ca.File, "CERTIFICATE", der)
	return ca
}

// Issue writes a certificate for 127.0.0.1 named name, good for uses
// (server authentication when none is given), and its key, to the CA's
// directory as name.pem and name.key, replacing any there: it returns
// their paths and the certificate's serial number.
func (ca *CA) Issue(tb testing.TB, name string, uses ...x509.ExtKeyUsage) (certFile, keyFile string, serial *big.Int) {
	tb.Helper()
	if len(uses) == 0 {
		uses = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	key := newKey(tb)
	serial = big.NewInt(serials.Add(1))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  uses,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+".key")
	writePEM(tb, keyFile, "PRIVATE KEY", keyDER)
	writePEM(tb, certFile, "CERTIFICATE", der)
	return certFile, keyFile, serial
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// writePEM writes one block to path through a file renamed into place, as
// a tool that renews certificates does.
func writePEM(tb testing.TB, path, kind string, der []byte) {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}
