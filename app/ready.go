package app

import (
	"context"
	"errors"
	"strings"

	"github.com/leafid/leaf/httpapi"
)

// Readiness is package readiness's: only this instance's own problems fail
// it; an outage of the store, which every instance shares, degrades it.
// What app adds is its own lifecycle, and the stores' state for /status.

func (a *Server) lifecycleCheck(context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// storesUp reports whether every store answers.
func (a *Server) storesUp() bool {
	for _, s := range a.ready.All() {
		if !s.Store.Health().Up {
			return false
		}
	}
	return true
}

// storeHealth is the stores' health as /status shows it: up while every
// store answers, since the last came back; else down since the first went
// down, with why each is down; the calls failed of them all.
func (a *Server) storeHealth() httpapi.StoreHealth {
	var (
		out  httpapi.StoreHealth
		errs []string
	)
	out.Up = true
	for _, s := range a.ready.All() {
		h := s.Store.Health()
		switch {
		case h.Up && out.Up:
			if h.Since.After(out.Since) {
				out.Since = h.Since
			}
		case !h.Up:
			if out.Up || h.Since.Before(out.Since) {
				out.Since = h.Since
			}
			out.Up = false
			if h.Err != nil {
				errs = append(errs, s.Errorf(h.Err).Error())
			}
		}
		out.Failed += h.Failed
	}
	out.Err = strings.Join(errs, "; ")
	return out
}
