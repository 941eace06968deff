package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckTimeout bounds each readiness check.
const CheckTimeout = 2 * time.Second

func (s *server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

type checkJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "ok" or "failing"
}

type readyJSON struct {
	Status string      `json:"status"` // "ready" or "not_ready"
	Checks []checkJSON `json:"checks"`
	// Error is set when not ready, in the shape of every error.
	Error *errorDetail `json:"error,omitempty"`
}

// readyz runs every check at once, each bounded by CheckTimeout. The
// reasons of failures are logged, not shown: they may name hosts.
func (s *server) readyz(c echo.Context) error {
	ctx := c.Request().Context()
	checks := s.cfg.Checks
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
			defer cancel()
			errs[i] = runCheck(cctx, ch)
		})
	}
	wg.Wait()

	out := readyJSON{Status: "ready", Checks: make([]checkJSON, len(checks))}
	var failing []string
	for i, ch := range checks {
		out.Checks[i] = checkJSON{Name: ch.Name, Status: "ok"}
		if errs[i] != nil {
			out.Checks[i].Status = "failing"
			failing = append(failing, ch.Name)
			s.log.WarnContext(ctx, "readiness check failing", "check", ch.Name, "err", errs[i])
		}
	}
	if len(failing) == 0 {
		return c.JSON(http.StatusOK, out)
	}
	out.Status = "not_ready"
	out.Error = &errorDetail{Code: CodeUnavailable, Message: "failing checks: " + strings.Join(failing, ", ")}
	c.Response().Header().Set("Retry-After", retryAfter)
	return c.JSON(http.StatusServiceUnavailable, out)
}

// runCheck runs one check, turning a panic or a nil func into a failure.
func runCheck(ctx context.Context, ch Check) (err error) {
	if ch.Func == nil {
		return errNilCheck
	}
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r}
		}
	}()
	return ch.Func(ctx)
}

var errNilCheck = newError(http.StatusInternalServerError, CodeInternal, "check has no func")

func (s *server) metricsHandler() echo.HandlerFunc {
	h := promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{
		Registry:      s.cfg.Registry, // promhttp_metric_handler_errors_total
		ErrorHandling: promhttp.ContinueOnError,
	})
	return echo.WrapHandler(h)
}
