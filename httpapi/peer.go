package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

// maxForwardedBody bounds an owner's answer: the longest is a batch of
// MaxCount texts of a formatted tag, each at most service.MaxTextJSON
// bytes and a comma (about 15 MB). A longer answer is refused, never read
// cut.
const maxForwardedBody = MaxCount*(service.MaxTextJSON+1) + 1<<10

// Peer is the HTTP API as leaf's instances speak it among themselves
// (service.Peer): a call for numbers another instance owns goes to the
// owner as the GET of a batch (or of a key's current number), marked with
// HeaderForwarded so that the owner never sends it on, and the answer is
// read back into numbers or texts, or into the owner's refusal with its
// code and message.
type Peer struct {
	client *http.Client
	scheme string // "http://" or "https://"
	token  string // the id routes' token, sent with each request; "": none
}

var _ service.Peer = (*Peer)(nil)

// WithToken has p send the id routes' token (Config.IDToken) with each
// request, as the owners ask it of every call; it returns p.
func (p *Peer) WithToken(token string) *Peer {
	p.token = token
	return p
}

// NewPeer returns a Peer whose requests end after timeout
// (DefaultForwardTimeout when 0), over HTTPS when tlsFor is not nil (the
// fleet serves TLS): each connection to an owner made with tlsFor of the
// owner's host, which verifies its certificate for that host (and with
// mutual TLS presents this instance's); over plain HTTP when it is nil.
func NewPeer(timeout time.Duration, tlsFor func(host string) *tls.Config) *Peer {
	if timeout <= 0 {
		timeout = DefaultForwardTimeout
	}
	tr := &http.Transport{
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     time.Minute,
	}
	p := &Peer{scheme: "http://", client: &http.Client{
		Timeout:       timeout,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	if tlsFor != nil {
		p.scheme = "https://"
		var d net.Dialer
		tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			raw, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			cfg := tlsFor(host)
			cfg.ServerName = host
			cfg.NextProtos = []string{"http/1.1"}
			c := tls.Client(raw, cfg)
			if err := c.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, err
			}
			return c, nil
		}
	}
	return p
}

// TagNumbers asks for n ids of an ordered tag: GET /api/segment/batch.
func (p *Peer) TagNumbers(ctx context.Context, addr, tag string, n int) ([]int64, error) {
	texts, err := p.batch(ctx, addr, "/api/segment/batch/"+url.PathEscape(tag)+"?count="+strconv.Itoa(n), "ids", n)
	if err != nil {
		return nil, err
	}
	return numbers(texts)
}

// TagTexts asks for n ids of a formatted tag: GET /api/segment/batch.
func (p *Peer) TagTexts(ctx context.Context, addr, tag string, n int) ([]string, error) {
	return p.batch(ctx, addr, "/api/segment/batch/"+url.PathEscape(tag)+"?count="+strconv.Itoa(n), "ids", n)
}

// KeyNext asks for n numbers of a key: GET /api/sequence/next.
func (p *Peer) KeyNext(ctx context.Context, addr, space, key string, n int) ([]int64, error) {
	texts, err := p.batch(ctx, addr, keyPath("next", space, key)+"?count="+strconv.Itoa(n), "seqs", n)
	if err != nil {
		return nil, err
	}
	return numbers(texts)
}

// KeyCurrent asks for a key's last number: GET /api/sequence/current.
func (p *Peer) KeyCurrent(ctx context.Context, addr, space, key string) (int64, error) {
	body, err := p.get(ctx, addr, keyPath("current", space, key))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(body), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the owner answered %q, not a number", body)
	}
	return v, nil
}

func keyPath(route, space, key string) string {
	return "/api/sequence/" + route + "/" + url.PathEscape(space) + "/" + url.PathEscape(key)
}

// batch reads the n strings of member of a batch's answer.
func (p *Peer) batch(ctx context.Context, addr, target, member string, n int) ([]string, error) {
	body, err := p.get(ctx, addr, target)
	if err != nil {
		return nil, err
	}
	var answer map[string]json.RawMessage
	var texts []string
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("the owner's answer: %w", err)
	}
	if err := json.Unmarshal(answer[member], &texts); err != nil {
		return nil, fmt.Errorf("the owner's answer, %s: %w", member, err)
	}
	if len(texts) != n {
		return nil, fmt.Errorf("asked the owner for %d, got %d", n, len(texts))
	}
	return texts, nil
}

// numbers reads decimal numbers.
func numbers(texts []string) ([]int64, error) {
	out := make([]int64, len(texts))
	for i, t := range texts {
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the owner answered %q, not a number", t)
		}
		out[i] = v
	}
	return out, nil
}

// get sends GET target to the owner at addr, marked as forwarded, and
// returns the body of a 200. Any other answer with the API's error shape
// and a known code is the owner's refusal, a *service.Error with its code
// and message; an answer without is no owner's (a proxy's, a server that
// is not leaf, a plain HTTP server asked over TLS or the other way): an
// error the forwarder counts as failed.
func (p *Peer) get(ctx context.Context, addr, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.scheme+addr+target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(HeaderForwarded, "1")
	if p.token != "" {
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBody+1))
	switch {
	case err != nil:
		return nil, err
	case len(body) > maxForwardedBody:
		return nil, fmt.Errorf("the owner's answer is longer than %d bytes", maxForwardedBody)
	case resp.StatusCode == http.StatusOK:
		return body, nil
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || !slices.Contains(service.Codes(), e.Error.Code) {
		return nil, fmt.Errorf("%s answered %d without leaf's error shape", addr, resp.StatusCode)
	}
	return nil, &service.Error{Code: e.Error.Code, Message: e.Error.Message}
}
