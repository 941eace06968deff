package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/readiness"
)

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
	// Reason is why a check of readiness.Check.ShowReason failed.
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

// readyz runs every check at once, each bounded by readiness.Timeout. It
// answers 503 only for this instance's own problems (starting, shutting
// down, snowflake lease lost, clock behind); a check that fails with
// ErrDegraded leaves it 200 with the check named. The reasons of failures
// are shown only for checks that allow it (readiness.Check.ShowReason): others may
// name hosts.
func (s *server) readyz(c echo.Context) error {
	ctx := c.Request().Context()
	checks := s.cfg.Checks
	errs := readiness.Run(ctx, checks)
	failing := readiness.Failing(checks, errs)

	out := readyJSON{Status: "ready", Checks: make([]checkJSON, len(checks))}
	for i, ch := range checks {
		out.Checks[i] = checkJSON{Name: ch.Name, Status: "ok"}
		switch err := errs[i]; {
		case err == nil:
		case errors.Is(err, readiness.ErrDegraded):
			out.Checks[i].Status = "degraded"
			out.Degraded = append(out.Degraded, ch.Name)
		default:
			out.Checks[i].Status = "failing"
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
