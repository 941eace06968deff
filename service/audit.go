package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/throttle"
)

// The trail of the admin calls: every change of a tag or a space is
// logged at INFO with what it was before and after and the fingerprint of
// the token that made it; every call refused for its token is counted, and
// logged at WARN once per edge and throttle.Every.

type adminKey struct{}

// TokenFingerprint is what the logs show of a token: 8 hex digits of a
// hash, from which the token cannot be found, the same for the same
// token across instances and restarts.
func TokenFingerprint(token string) string {
	h := sha256.Sum256([]byte("leaf token fingerprint v1\x00" + token))
	return hex.EncodeToString(h[:4])
}

// WithAdmin marks ctx as an admin call made with the token of fingerprint
// (TokenFingerprint), which the trail then names.
func WithAdmin(ctx context.Context, fingerprint string) context.Context {
	return context.WithValue(ctx, adminKey{}, fingerprint)
}

// adminOf is the fingerprint of the token of ctx's call, "" for a call
// made without one (the command line, which needs none).
func adminOf(ctx context.Context) string {
	s, _ := ctx.Value(adminKey{}).(string)
	return s
}

// trail logs the changes the admin calls make.
type trail struct{ log *slog.Logger }

// tagCreated logs a tag made.
func (t trail) tagCreated(ctx context.Context, v TagView) {
	if t.log == nil {
		return
	}
	t.log.InfoContext(ctx, "admin: tag created", "tag", v.Name, "after", tagLog(v), "token", adminOf(ctx))
}

// tagChanged logs a tag changed, as it was and as it is.
func (t trail) tagChanged(ctx context.Context, before, after TagView) {
	if t.log == nil {
		return
	}
	t.log.InfoContext(ctx, "admin: tag changed", "tag", after.Name, "before", tagLog(before), "after", tagLog(after), "token", adminOf(ctx))
}

// spaceCreated logs a space made.
func (t trail) spaceCreated(ctx context.Context, sp sequence.Space) {
	if t.log == nil {
		return
	}
	t.log.InfoContext(ctx, "admin: space created", "space", sp.Name,
		"after", slog.GroupValue(slog.Int64("step", sp.Step), slog.Int("sections", sp.Sections)), "token", adminOf(ctx))
}

// tagLog is what the trail shows of a tag: its row and its settings,
// never a key (only its fingerprint).
func tagLog(v TagView) slog.Value {
	attrs := []slog.Attr{slog.Int64("max_id", v.MaxID), slog.Int64("step", v.Step), slog.String("description", v.Description)}
	if v.Ordered {
		attrs = append(attrs, slog.Bool("ordered", true))
	}
	if v.Format != "" {
		attrs = append(attrs, slog.String("format", v.Format), slog.String("reset", v.Reset), slog.String("time_zone", v.TimeZone))
	}
	if v.Opaque != 0 {
		attrs = append(attrs, slog.Int("opaque", v.Opaque), slog.String("key_id", v.KeyID))
	}
	return slog.GroupValue(attrs...)
}

// AdminRefusals counts and logs the admin calls refused for their token.
type AdminRefusals struct {
	count *prometheus.CounterVec
	log   *slog.Logger
	limit *throttle.Limiter
}

// NewAdminRefusals registers leaf_admin_refused_total on reg (a private
// registry when nil) and logs to log (discarded when nil).
func NewAdminRefusals(reg prometheus.Registerer, log *slog.Logger) *AdminRefusals {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &AdminRefusals{
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaf_admin_refused_total",
			Help: "Admin calls (and calls of the status page with its token) refused for a missing or wrong bearer token, by edge and reason.",
		}, []string{"edge", "reason"}),
		log: log, limit: throttle.New(throttle.Every),
	}
	registerOrReuse(reg, &a.count)
	return a
}

// registerOrReuse registers *c on reg (nothing when reg is nil), or takes
// the one registered there before under its name: the edges of one
// server share a registry.
func registerOrReuse(reg prometheus.Registerer, c **prometheus.CounterVec) {
	if reg == nil {
		return
	}
	if err := reg.Register(*c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			*c = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
}

// Refused counts a call of edge ("http", "grpc") refused with err
// (ErrNoToken or ErrWrongToken), from the address from, and logs it unless
// one was logged within throttle.Every.
func (a *AdminRefusals) Refused(ctx context.Context, edge, from string, err error) {
	if a == nil {
		return
	}
	reason := "missing"
	if err == ErrWrongToken {
		reason = "wrong"
	}
	a.count.WithLabelValues(edge, reason).Inc()
	if ok, held := a.limit.Allow(edge); ok {
		a.log.WarnContext(ctx, "admin: a call refused for its token", "edge", edge, "reason", reason, "from", from, "held_back", held)
	}
}
