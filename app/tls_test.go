package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store/storetest"
)

// tlsFleet is two instances over one database and a client of them: with
// TLS (newTLSFleet) each has a certificate of ca, which the client trusts.
type tlsFleet struct {
	base   [2]string
	certs  [2]string // each instance's certificate file
	ca     *testkit.CA
	client *http.Client
	auth   string // an Authorization sent with every request that has none
}

func newTLSFleet(t *testing.T, mutual bool) *tlsFleet {
	f := &tlsFleet{ca: testkit.NewCA(t)}
	f.start(t, "https://", func(i int, cfg *Config) {
		cert, key, _ := f.ca.Issue(t, fmt.Sprintf("leaf%d", i), x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
		cfg.TLSCert, cfg.TLSKey, cfg.PeerCA, cfg.PeerMutualTLS = cert, key, f.ca.File, mutual
		f.certs[i] = cert
	})
	f.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool}, MaxIdleConnsPerHost: 8}}
	return f
}

// start serves the fleet's two instances over one MySQL database, each
// configured by edit, reached with scheme.
func (f *tlsFleet) start(t *testing.T, scheme string, edit func(i int, cfg *Config)) {
	dsn := storetest.MySQL(t)
	for i := range f.base {
		cfg := testConfig(t)
		cfg.StoreConfig = StoreConfig{MySQLDSN: dsn}
		cfg.Migrate = i == 0
		cfg.SequenceLease = 2 * time.Second // rounds every half second: the sections spread sooner
		edit(i, &cfg)
		f.base[i] = scheme + serving(t, cfg).Addr()
	}
}

// do sends a request and returns its status and body.
func (f *tlsFleet) do(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if f.auth != "" {
		req.Header.Set("Authorization", f.auth)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// get is GET url, asked again while the answer is that ownership is
// moving (as a client does on a 503 with Retry-After), at most 20 times.
func (f *tlsFleet) get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	for try := 0; ; try++ {
		code, body := f.do(t, http.MethodGet, url, "", header...)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "moving") || try == 20 {
			return code, body
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// forwards is an instance's count of forwards by result.
func (f *tlsFleet) forwards(t *testing.T, i int) map[string]int {
	_, body := f.do(t, http.MethodGet, f.base[i]+"/metrics", "")
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`leaf_sequence_forwards_total\{result="(\w+)"\} (\d+)`).FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	return out
}

// settled waits until both instances route every section of space to
// the same owners, and have for a second (the members have seen each
// other: no section is moving).
func (f *tlsFleet) settled(t *testing.T, space string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var stable string
	var since time.Time
	for {
		var tables [2]string
		for i := range f.base {
			_, tables[i] = f.do(t, http.MethodGet, f.base[i]+"/api/sequence/routes/"+space, "")
		}
		var routes struct{ Owners []int }
		switch {
		case tables[0] != tables[1] || json.Unmarshal([]byte(tables[0]), &routes) != nil || slices.Contains(routes.Owners, -1):
			stable = ""
		case tables[0] != stable:
			stable, since = tables[0], time.Now()
		case time.Since(since) > time.Second:
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sections of %s are not settled after 60 s: %s and %s", space, tables[0], tables[1])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFleetOverTLS: two instances serving TLS, each call of every kind
// that one instance owns asked through both: the instance that does not
// own it forwards it over HTTPS, verifying the owner's certificate, and
// every call is answered (0 failures, the forwards counted ok). With
// mutual TLS, the mark of a forwarded call from a caller without an
// instance's certificate is ignored. A certificate renewed on disk is
// served from the next connection, without a restart.
func TestFleetOverTLS(t *testing.T) {
	for _, mutual := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "mutual"}[mutual], func(t *testing.T) {
			f := newTLSFleet(t, mutual)
			admin := []string{"Authorization", "Bearer admin"}
			for path, body := range map[string]string{
				"/api/admin/tags":      `{"tag":"ticks","ordered":true}`,
				"/api/admin/sequences": `{"space":"inbox","sections":4}`,
			} {
				if code, answer := f.do(t, http.MethodPost, f.base[0]+path, body, admin...); code != http.StatusCreated {
					t.Fatalf("POST %s = %d %s", path, code, answer)
				}
			}
			if code, answer := f.do(t, http.MethodPost, f.base[0]+"/api/admin/tags",
				`{"tag":"inv","format":"INV-{date:20060102}-{seq:6!}","reset":"day"}`, admin...); code != http.StatusCreated {
				t.Fatalf("the capped tag = %d %s", code, answer)
			}
			f.settled(t, "inbox")
			paths := []string{"/api/segment/get/ticks", "/api/segment/get/inv"}
			for k := range 8 {
				paths = append(paths, fmt.Sprintf("/api/sequence/next/inbox/user%d", k))
			}
			failed := 0
			for round := range 5 {
				for _, p := range paths {
					for i := range f.base {
						if code, body := f.get(t, f.base[i]+p); code != http.StatusOK {
							failed++
							t.Logf("round %d, instance %d, %s: %d %s", round, i, p, code, body)
						}
					}
				}
			}
			fw := [2]map[string]int{f.forwards(t, 0), f.forwards(t, 1)}
			if failed > 0 || fw[0]["failed"]+fw[1]["failed"] > 0 {
				t.Errorf("%d calls failed; forwards %v and %v", failed, fw[0], fw[1])
			}
			if fw[0]["ok"]+fw[1]["ok"] == 0 {
				t.Errorf("no call was forwarded (forwards %v and %v): the test asked no instance that did not own", fw[0], fw[1])
			}

			// A caller marking its calls as forwarded: without mutual TLS
			// the non-owner takes the mark and refuses to send them on;
			// with it the mark is ignored and every call is answered (once
			// ownership is not moving).
			refusedBefore := fw[0]["refused"] + fw[1]["refused"]
			answered := 0
			for _, p := range paths {
				for i := range f.base {
					get := f.do
					if mutual {
						get = func(t *testing.T, _, url, _ string, header ...string) (int, string) { return f.get(t, url, header...) }
					}
					if code, _ := get(t, http.MethodGet, f.base[i]+p, "", "Leaf-Forwarded", "1"); code == http.StatusOK {
						answered++
					}
				}
			}
			refused := f.forwards(t, 0)["refused"] + f.forwards(t, 1)["refused"] - refusedBefore
			switch {
			case mutual && answered != 2*len(paths):
				t.Errorf("with mutual TLS, marked calls from a caller without a certificate: %d of %d answered, %d refused; want the mark ignored", answered, 2*len(paths), refused)
			case !mutual && refused == 0:
				t.Errorf("without mutual TLS, no marked call was refused: the test asked no instance that did not own")
			}

			// The certificate renewed on disk is served from the next
			// connection on.
			_, _, serial := f.ca.Issue(t, "leaf0", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
			deadline := time.Now().Add(5 * time.Second)
			for {
				f.client.CloseIdleConnections()
				resp, err := f.client.Get(f.base[0] + "/healthz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.TLS.PeerCertificates[0].SerialNumber.Cmp(serial) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the renewed certificate (serial %v) is not served 5 s after it was written", serial)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// TestClearLinkSaid: a DSN that asks tls=preferred of a server speaking
// no TLS opens over a link in clear, and the start-up log says so at WARN.
func TestClearLinkSaid(t *testing.T) {
	dsn := storetest.MySQL(t)
	// Whether the server speaks TLS: MariaDB here does not, MySQL 9.7
	// does with certificates of its own.
	db, err := sql.Open("mysql", dsn+"&tls=preferred")
	if err != nil {
		t.Fatal(err)
	}
	var name, cipher string
	if err := db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatal(err)
	}
	db.Close()
	onTLS := cipher != ""
	cfg := testConfig(t)
	cfg.StoreConfig = StoreConfig{MySQLDSN: dsn + "&tls=preferred"}
	logs := &syncWriter{w: &bytes.Buffer{}}
	srv := New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	said := strings.Contains(text, "level=WARN msg=\"store open over a link in clear")
	if !onTLS && !said {
		t.Errorf("a link in clear under tls=preferred not said; the log:\n%s", text)
	}
	if onTLS && said {
		t.Errorf("a link over TLS said to be in clear")
	}
}

// syncWriter serializes the writes of a log, and its reading.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
