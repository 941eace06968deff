package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/sequence"
)

// SequenceNext takes n numbers of key and returns the first; when another
// instance owns the key's section, the owner is asked for them, in one
// request with the other calls for the key waiting here. A call that came
// forwarded already is refused.
func (s *Service) SequenceNext(ctx context.Context, space, key string, n int, via Via) (first int64, err error) {
	if s.cfg.Sequences == nil {
		return 0, SequencesOff()
	}
	first, err = s.cfg.Sequences.NextN(ctx, space, key, n)
	var no *sequence.NotOwnerError
	switch {
	case err == nil:
		return first, nil
	case errors.As(err, &no) && forwarded(via):
		return 0, s.fwd.refuseForwarded()
	case errors.As(err, &no):
		// The owner is asked with the other calls for the key waiting
		// here; a key's numbers of one answer are consecutive.
		nums, err := s.fwd.takeOwned(ctx, takeKey{addr: no.Addr, space: space, key: key}, n)
		if err != nil {
			return 0, err
		}
		return nums[0], nil
	}
	return 0, WithSpace(space, err)
}

// SequenceCurrent is the last number issued to key, asked of the owner of
// its section when another instance owns it, as SequenceNext.
func (s *Service) SequenceCurrent(ctx context.Context, space, key string, via Via) (v int64, err error) {
	if s.cfg.Sequences == nil {
		return 0, SequencesOff()
	}
	v, err = s.cfg.Sequences.Current(ctx, space, key)
	var no *sequence.NotOwnerError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &no):
		return s.fwd.keyCurrent(ctx, no.Addr, space, key, forwarded(via))
	}
	return 0, WithSpace(space, err)
}

// SequenceRoutes is a space's routing table.
func (s *Service) SequenceRoutes(ctx context.Context, space string) (sequence.Routes, error) {
	if s.cfg.Sequences == nil {
		return sequence.Routes{}, SequencesOff()
	}
	rt, ok := s.cfg.Sequences.(SequenceRoutes)
	if !ok {
		return sequence.Routes{}, Errorf(NotFound, "this server tells no routing tables")
	}
	r, err := rt.Routes(ctx, space)
	if err != nil {
		return sequence.Routes{}, WithSpace(space, err)
	}
	return r, nil
}

// RoutesVersion is the version of a space's routing table, "" for a space
// not known yet; ok is false where no routing tables are told.
func (s *Service) RoutesVersion(space string) (v string, ok bool) {
	rt, ok := s.cfg.Sequences.(SequenceRoutes)
	if !ok {
		return "", false
	}
	return rt.RoutesVersion(space), true
}

// TellsRoutes reports whether routing tables are told here.
func (s *Service) TellsRoutes() bool {
	_, ok := s.cfg.Sequences.(SequenceRoutes)
	return ok
}

// NewSpace is a space an admin call asks for: a nil member was not given
// and takes its default.
type NewSpace struct {
	Name     string
	Step     *int64
	Sections *int64
}

// Space is the space ns asks for, with the defaults of the members not
// given, checked by the rules that both edges and leaf sequence add share.
func (ns NewSpace) Space() (sequence.Space, error) {
	sp := sequence.Space{Name: ns.Name, Step: sequence.DefaultStep, Sections: sequence.DefaultSections}
	if ns.Step != nil {
		sp.Step = *ns.Step
	}
	if ns.Sections != nil {
		if v := *ns.Sections; v < 1 || v > sequence.MaxSections {
			return sequence.Space{}, fmt.Errorf("%w: %d, want 1..%d", sequence.ErrInvalidSections, v, sequence.MaxSections)
		}
		sp.Sections = int(*ns.Sections)
	}
	return sp, sp.Validate()
}

// SpaceCall is the check of a call for a space that both edges answer
// before they read the rest of it: sequences off, then a name that cannot
// be a space's.
func (s *Service) SpaceCall(space string) error {
	if err := s.Off(ModeSequences); err != nil {
		return err
	}
	return sequence.ValidateSpace(space)
}

// SequenceCall is SpaceCall for a call for a key of the space, and then
// the key's name.
func (s *Service) SequenceCall(space, key string) error {
	if err := s.SpaceCall(space); err != nil {
		return err
	}
	return sequence.ValidateKey(key)
}

// SpacesOff is the error of an admin call for spaces where they are off,
// nil where they are on: for an edge to answer it before it reads a
// request's body.
func (s *Service) SpacesOff() error {
	if s.cfg.Spaces == nil {
		return SequencesOff()
	}
	return nil
}

// CreateSpace creates a space, with the defaults of the members not given
// and the same rules whatever the protocol.
func (s *Service) CreateSpace(ctx context.Context, ns NewSpace) (sequence.Space, error) {
	if s.cfg.Spaces == nil {
		return sequence.Space{}, SequencesOff()
	}
	sp, err := ns.Space()
	if err != nil {
		return sequence.Space{}, err
	}
	if err := s.refuseAlikeSpace(ctx, sp.Name); err != nil {
		return sequence.Space{}, WithSpace(sp.Name, err)
	}
	created, err := s.cfg.Spaces.CreateSpace(ctx, sp)
	if err != nil {
		return sequence.Space{}, WithSpace(sp.Name, err)
	}
	trail{s.cfg.Logger}.spaceCreated(ctx, created)
	return created, nil
}

// Space reads one space.
func (s *Service) Space(ctx context.Context, name string) (sequence.Space, error) {
	if s.cfg.Spaces == nil {
		return sequence.Space{}, SequencesOff()
	}
	if err := sequence.ValidateSpace(name); err != nil {
		return sequence.Space{}, err
	}
	sp, err := s.cfg.Spaces.Space(ctx, name)
	if err != nil {
		return sequence.Space{}, WithSpace(name, err)
	}
	return sp, nil
}

// Spaces reads every space.
func (s *Service) Spaces(ctx context.Context) ([]sequence.Space, error) {
	if s.cfg.Spaces == nil {
		return nil, SequencesOff()
	}
	return s.cfg.Spaces.Spaces(ctx)
}
