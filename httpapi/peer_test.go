package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/fleettest"
	"github.com/leafid/leaf/service"
)

// TestPeer: the peer asks the owner with the HTTP API's requests, marked
// as forwarded, and reads the answers back: numbers, texts, a key's
// current number, the owner's refusal with its code and message, and
// an error of the call for an answer without the API's error shape.
func TestPeer(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(httpapi.HeaderForwarded) != "1" {
			http.Error(w, "not marked", http.StatusTeapot)
			return
		}
		switch r.URL.RequestURI() {
		case "/api/segment/batch/o%2Fv2?count=2":
			_, _ = w.Write([]byte(`{"tag":"o/v2","ids":["7","8"]}`))
		case "/api/segment/batch/f?count=1":
			_, _ = w.Write([]byte(`{"tag":"f","ids":["F-001"]}`))
		case "/api/sequence/next/inbox/u1?count=3":
			_, _ = w.Write([]byte(`{"space":"inbox","key":"u1","seqs":["4","5","6"]}`))
		case "/api/sequence/current/inbox/u1":
			_, _ = w.Write([]byte(`6`))
		case "/api/segment/batch/busy?count=1":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"moving"}}`))
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	p := httpapi.NewPeer(0, nil)
	ctx := context.Background()
	if ids, err := p.TagNumbers(ctx, addr, "o/v2", 2); err != nil || len(ids) != 2 || ids[0] != 7 || ids[1] != 8 {
		t.Errorf("TagNumbers = %v, %v", ids, err)
	}
	if texts, err := p.TagTexts(ctx, addr, "f", 1); err != nil || len(texts) != 1 || texts[0] != "F-001" {
		t.Errorf("TagTexts = %v, %v", texts, err)
	}
	if seqs, err := p.KeyNext(ctx, addr, "inbox", "u1", 3); err != nil || len(seqs) != 3 || seqs[0] != 4 {
		t.Errorf("KeyNext = %v, %v", seqs, err)
	}
	if v, err := p.KeyCurrent(ctx, addr, "inbox", "u1"); err != nil || v != 6 {
		t.Errorf("KeyCurrent = %v, %v", v, err)
	}
	if _, err := p.TagNumbers(ctx, addr, "busy", 1); code(err) != service.Unavailable || !strings.Contains(err.Error(), "moving") {
		t.Errorf("the owner's refusal: %v", err)
	}
	// No owner's answer: an error of the call, which the forwarder
	// counts as failed, not the owner's refusal.
	var refusal *service.Error
	if _, err := p.TagNumbers(ctx, addr, "other", 1); err == nil || errors.As(err, &refusal) || !strings.Contains(err.Error(), "502") {
		t.Errorf("an answer without the error shape: %v", err)
	}
	if _, err := p.TagNumbers(ctx, addr, "o/v2", 3); err == nil {
		t.Error("an answer of another count taken")
	}
}

// TestPeerLargeAnswer: an owner's answer as long as a batch of the
// longest texts a formatted tag can have comes back whole; a longer one
// is refused, never read cut.
func TestPeerLargeAnswer(t *testing.T) {
	text := `"` + strings.Repeat(`\u003c`, bizid.MaxFormatLen) + `"`
	batch := `{"tag":"t","ids":[` + strings.TrimSuffix(strings.Repeat(text+",", service.MaxCount), ",") + `]}`
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/segment/batch/longer") {
			_, _ = w.Write([]byte(strings.Repeat(" ", httpapi.MaxForwardedBody-len(batch)+1)))
		}
		_, _ = w.Write([]byte(batch))
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	// A timeout no loaded machine reaches: the size is what is tested.
	p := httpapi.NewPeer(time.Minute, nil)
	texts, err := p.TagTexts(context.Background(), addr, "t", service.MaxCount)
	if err != nil || len(texts) != service.MaxCount || len(texts[0]) != bizid.MaxFormatLen {
		t.Fatalf("a batch of %d bytes: %d texts, %v", len(batch), len(texts), err)
	}
	if _, err := p.TagTexts(context.Background(), addr, "longer", service.MaxCount); err == nil {
		t.Fatalf("an answer of %d bytes taken", httpapi.MaxForwardedBody+1)
	}
}

// TestPeerNames: the owner reads the names the peer asks for as they
// are, whatever they hold: a "/", a "%", characters beyond ASCII, the
// characters a path may hold raw.
func TestPeerNames(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tag, ok := fleettest.PathParam(r.URL, "/api/segment/batch/")
		if !ok {
			http.Error(w, "unreadable "+r.URL.String(), http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte(`{"ids":[` + strconv.Quote(tag) + `]}`))
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	p := httpapi.NewPeer(0, nil)
	for _, name := range []string{"orders", "a/b", "é/b", "订单", "a%3Ab:c@d", "订%", "x?y#z", "a b"} {
		texts, err := p.TagTexts(context.Background(), addr, name, 1)
		if err != nil || len(texts) != 1 || texts[0] != name {
			t.Errorf("%q read by the owner as %q, %v", name, texts, err)
		}
	}
}

// code is the API's code of err, "" for nil.
func code(err error) string {
	if err == nil {
		return ""
	}
	c, _ := service.Classify(err)
	return c
}
