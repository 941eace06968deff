package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// checkTimeout bounds each readiness check: /readyz answers within it
// whatever a check does. Checks read state kept up to date elsewhere; none
// of them calls the database.
const checkTimeout = 50 * time.Millisecond

// ErrDegraded marks the error of a readiness check that failed for a
// reason every instance shares (the store is unreachable): the instance
// stays ready, for a load balancer would gain nothing by taking every
// instance out at once, and /readyz names the degradation.
var ErrDegraded = errors.New("degraded")

// Check is one readiness check of /readyz. Func returns nil when ready.
type Check struct {
	Name string
	Func func(ctx context.Context) error
	// ShowReason puts the error of a failure in /readyz's answer; leave
	// it false for errors that may name hosts or addresses.
	ShowReason bool
}

func (s *server) healthz(c echo.Context) error {
	if c.QueryString() != "" {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) // ?pretty
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, healthzBody)
}

// healthzBody is the answer of /healthz, as c.JSON writes it: probes ask
// for it many times a second, and a constant allocates nothing.
var healthzBody = []byte(`{"status":"ok"}` + "\n")

type checkJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "ok", "degraded" or "failing"
	// Reason is why a check of Check.ShowReason failed.
	Reason string `json:"reason,omitempty"`
}

type readyJSON struct {
	Status string      `json:"status"` // "ready", "degraded" or "not_ready"
	Checks []checkJSON `json:"checks"`
	// Degraded names the checks that failed for a shared reason.
	Degraded []string `json:"degraded,omitempty"`
	// Error is set when not ready, in the shape of every error.
	Error *errorDetail `json:"error,omitempty"`
}

// readyz runs every check at once, each bounded by checkTimeout. It
// answers 503 only for this instance's own problems (starting, shutting
// down, snowflake lease lost, clock behind); a check that fails with
// ErrDegraded leaves it 200 with the check named. The reasons of failures
// are shown only for checks that allow it (Check.ShowReason): others may
// name hosts.
func (s *server) readyz(c echo.Context) error {
	ctx := c.Request().Context()
	checks := s.cfg.Checks
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Go(func() { errs[i] = runCheck(ctx, ch) })
	}
	wg.Wait()

	out := readyJSON{Status: "ready", Checks: make([]checkJSON, len(checks))}
	var failing []string
	for i, ch := range checks {
		out.Checks[i] = checkJSON{Name: ch.Name, Status: "ok"}
		switch err := errs[i]; {
		case err == nil:
		case errors.Is(err, ErrDegraded):
			out.Checks[i].Status = "degraded"
			out.Degraded = append(out.Degraded, ch.Name)
		default:
			out.Checks[i].Status = "failing"
			failing = append(failing, ch.Name)
		}
		if errs[i] != nil {
			if ch.ShowReason {
				out.Checks[i].Reason = errs[i].Error()
			}
			s.log.DebugContext(ctx, "readiness check", "check", ch.Name, "err", errs[i])
		}
	}
	if len(out.Degraded) > 0 {
		out.Status = "degraded"
	}
	if len(failing) == 0 {
		return c.JSON(http.StatusOK, out)
	}
	out.Status = "not_ready"
	out.Error = &errorDetail{Code: codeUnavailable, Message: "failing checks: " + strings.Join(failing, ", ")}
	c.Response().Header().Set("Retry-After", retryAfter)
	return c.JSON(http.StatusServiceUnavailable, out)
}

// errCheckTimeout is the failure of a check that did not answer in time.
var errCheckTimeout = errors.New("check did not answer within " + checkTimeout.String())

// runCheck runs one check, bounded by checkTimeout, turning a panic or a
// nil func into a failure. A check that overruns is left to finish alone.
func runCheck(ctx context.Context, ch Check) error {
	if ch.Func == nil {
		return errNilCheck
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- &panicError{value: r}
			}
		}()
		done <- ch.Func(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errCheckTimeout
	}
}

var errNilCheck = newError(http.StatusInternalServerError, codeInternal, "check has no func")

// Ready runs checks as /readyz does and returns nil when /readyz would
// answer 200 (a check failing with ErrDegraded leaves the instance ready),
// or an error naming the failing checks. The gRPC health service reports
// it.
func Ready(ctx context.Context, checks []Check) error {
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Go(func() { errs[i] = runCheck(ctx, ch) })
	}
	wg.Wait()
	var failing []string
	for i, ch := range checks {
		if errs[i] != nil && !errors.Is(errs[i], ErrDegraded) {
			failing = append(failing, ch.Name)
		}
	}
	if len(failing) > 0 {
		return errors.New("failing checks: " + strings.Join(failing, ", "))
	}
	return nil
}
