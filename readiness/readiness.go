// Package readiness says whether an instance can serve: the checks that
// /readyz (package httpapi) and the gRPC health service (package grpcapi)
// both run, the rule that tells an instance's own failure from an outage
// every instance shares, and the checks of the stores (stores.go).
//
// Checks read state kept up to date elsewhere; none of them calls the
// database, so an answer never waits on it.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Timeout bounds each check: readiness is known within it whatever a
// check does.
const Timeout = 50 * time.Millisecond

// ErrDegraded marks the error of a check that failed for a reason every
// instance shares (the store is unreachable): the instance stays ready,
// for a load balancer would gain nothing by taking every instance out at
// once, and /readyz names the degradation.
var ErrDegraded = errors.New("degraded")

// Check is one readiness check. Func returns nil when ready.
type Check struct {
	Name string
	Func func(ctx context.Context) error
	// ShowReason puts the error of a failure in /readyz's answer; leave
	// it false for errors that may name hosts or addresses.
	ShowReason bool
}

// Run runs every check at once, each bounded by Timeout, and returns
// their errors in the order of checks. A nil func, a panic and a check
// that overruns fail; one that overruns is left to finish alone.
func Run(ctx context.Context, checks []Check) []error {
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Go(func() { errs[i] = run(ctx, ch) })
	}
	wg.Wait()
	return errs
}

// errTimeout is the failure of a check that did not answer in time.
var errTimeout = errors.New("check did not answer within " + Timeout.String())

// errNoFunc is the failure of a check without a func.
var errNoFunc = errors.New("check has no func")

func run(ctx context.Context, ch Check) error {
	if ch.Func == nil {
		return errNoFunc
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("check panicked: %v", r)
			}
		}()
		done <- ch.Func(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errTimeout
	}
}

// Failing names the checks whose errors fail readiness: every error but
// those marked ErrDegraded.
func Failing(checks []Check, errs []error) []string {
	var failing []string
	for i, ch := range checks {
		if errs[i] != nil && !errors.Is(errs[i], ErrDegraded) {
			failing = append(failing, ch.Name)
		}
	}
	return failing
}

// Ready runs checks and returns nil when the instance is ready (a check
// failing with ErrDegraded leaves it ready), or an error naming the
// failing checks.
func Ready(ctx context.Context, checks []Check) error {
	if failing := Failing(checks, Run(ctx, checks)); len(failing) > 0 {
		return errors.New("failing checks: " + strings.Join(failing, ", "))
	}
	return nil
}
