package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// keySeqs are the sequences of one instance: the keys it owns count from
// 1; a key named far-* belongs to a section owned by owner:1, gone-* by
// an owner that does not answer; the space nope does not exist.
type keySeqs struct {
	mu   sync.Mutex
	last map[string]int64
}

func (k *keySeqs) owner(space, key string) error {
	switch {
	case space == "nope":
		return sequence.ErrUnknownSpace
	case strings.HasPrefix(key, "far-"):
		return &sequence.NotOwnerError{Addr: "owner:1"}
	case strings.HasPrefix(key, "gone-"):
		return &sequence.NotOwnerError{Addr: "127.0.0.1:1"}
	}
	return nil
}

func (k *keySeqs) NextN(_ context.Context, space, key string, n int) (int64, error) {
	if err := k.owner(space, key); err != nil {
		return 0, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.last == nil {
		k.last = map[string]int64{}
	}
	first := k.last[space+"/"+key] + 1
	k.last[space+"/"+key] += int64(n)
	return first, nil
}

func (k *keySeqs) Current(_ context.Context, space, key string) (int64, error) {
	if err := k.owner(space, key); err != nil {
		return 0, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last[space+"/"+key], nil
}

func (k *keySeqs) Stats() sequence.Stats { return sequence.Stats{} }

// routedSeqs are keySeqs that also tell their routing tables.
type routedSeqs struct{ keySeqs }

func (r *routedSeqs) Routes(_ context.Context, space string) (sequence.Routes, error) {
	if space == "nope" {
		return sequence.Routes{}, sequence.ErrUnknownSpace
	}
	return sequence.Routes{Space: space, Version: "v1"}, nil
}

func (r *routedSeqs) RoutesVersion(space string) string {
	if space == "inbox" {
		return "v1"
	}
	return ""
}

// TestSequences: a key owned here counts here; one whose section another
// instance owns is asked of the owner, in one call of the count asked, and
// a call that came forwarded is refused rather than sent on; an owner
// that does not answer is unavailable; a space that does not exist is
// named in its refusal; routing tables are told only by sequences that
// tell them.
func TestSequences(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Sequences: &keySeqs{}, Peer: &fakePeer{}})

	if first, err := svc.SequenceNext(ctx, "inbox", "u1", 3, nil); err != nil || first != 1 {
		t.Fatalf("owned key = %d, %v", first, err)
	}
	if first, err := svc.SequenceNext(ctx, "inbox", "u1", 1, nil); err != nil || first != 4 {
		t.Fatalf("owned key again = %d, %v", first, err)
	}
	if v, err := svc.SequenceCurrent(ctx, "inbox", "u1", nil); err != nil || v != 4 {
		t.Fatalf("current of an owned key = %d, %v", v, err)
	}
	if first, err := svc.SequenceNext(ctx, "inbox", "far-1", 2, nil); err != nil || first != 100 {
		t.Fatalf("a key owned elsewhere = %d, %v; want the owner's 100", first, err)
	}
	if v, err := svc.SequenceCurrent(ctx, "inbox", "far-1", nil); err != nil || v != 99 {
		t.Fatalf("current of a key owned elsewhere = %d, %v; want the owner's 99", v, err)
	}
	var via forwardedVia
	_, err := svc.SequenceNext(ctx, "inbox", "far-1", 1, via)
	wantCode(t, "a forwarded call for a key owned elsewhere", err, service.Unavailable, "ownership is moving")
	_, err = svc.SequenceCurrent(ctx, "inbox", "far-1", via)
	wantCode(t, "a forwarded read of a key owned elsewhere", err, service.Unavailable, "ownership is moving")
	_, err = svc.SequenceNext(ctx, "inbox", "gone-1", 1, nil)
	wantCode(t, "an owner that does not answer", err, service.Unavailable, "did not answer")
	_, err = svc.SequenceNext(ctx, "nope", "u1", 1, nil)
	wantCode(t, "an unknown space", err, service.UnknownSpace, `"nope" does not exist`)
	_, err = svc.SequenceCurrent(ctx, "nope", "u1", nil)
	wantCode(t, "the current of an unknown space", err, service.UnknownSpace, `"nope" does not exist`)
	if svc.Forwards() != 5 {
		t.Errorf("Forwards = %d, want 5 (two answered, two refused, one failed)", svc.Forwards())
	}

	_, err = svc.SequenceRoutes(ctx, "inbox")
	wantCode(t, "routes where none are told", err, service.NotFound, "no routing tables")
	if v, ok := svc.RoutesVersion("inbox"); ok || v != "" || svc.TellsRoutes() {
		t.Errorf("RoutesVersion = %q, %v, TellsRoutes %v where none are told", v, ok, svc.TellsRoutes())
	}
	routed := service.New(service.Config{Sequences: &routedSeqs{}})
	if r, err := routed.SequenceRoutes(ctx, "inbox"); err != nil || r.Version != "v1" {
		t.Fatalf("routes = %+v, %v", r, err)
	}
	_, err = routed.SequenceRoutes(ctx, "nope")
	wantCode(t, "the routes of an unknown space", err, service.UnknownSpace, `"nope"`)
	if v, ok := routed.RoutesVersion("inbox"); !ok || v != "v1" || !routed.TellsRoutes() {
		t.Errorf("RoutesVersion = %q, %v, TellsRoutes %v", v, ok, routed.TellsRoutes())
	}
	if v, ok := routed.RoutesVersion("new"); !ok || v != "" {
		t.Errorf("RoutesVersion of a space not known yet = %q, %v", v, ok)
	}
}

// TestSequenceCalls: the checks both edges make before reading a call for
// a space or a key: sequences off first, then the space's name, then the
// key's.
func TestSequenceCalls(t *testing.T) {
	on := service.New(service.Config{Sequences: &keySeqs{}})
	if err := on.SequenceCall("inbox", "u1"); err != nil {
		t.Fatalf("a good call: %v", err)
	}
	wantCode(t, "a bad space", on.SequenceCall("", "u1"), service.InvalidSpace, "empty")
	wantCode(t, "a bad key", on.SequenceCall("inbox", ""), service.InvalidKey, "empty")
	wantCode(t, "a bad space for a space call", on.SpaceCall(string(make([]rune, sequence.MaxSpaceLen+1))), service.InvalidSpace, "more than")

	off := service.New(service.Config{})
	for what, err := range map[string]error{
		"SequenceCall":    off.SequenceCall("", ""),
		"SpaceCall":       off.SpaceCall(""),
		"SpacesOff":       off.SpacesOff(),
		"Off(sequences)":  off.Off(service.ModeSequences),
		"SequenceRoutes":  second(off.SequenceRoutes(context.Background(), "inbox")),
		"SequenceNext":    second(off.SequenceNext(context.Background(), "inbox", "u1", 1, nil)),
		"SequenceCurrent": second(off.SequenceCurrent(context.Background(), "inbox", "u1", nil)),
	} {
		wantCode(t, what+" with sequences off", err, service.NotFound, "sequences are not enabled")
	}
	if off.TellsRoutes() {
		t.Error("TellsRoutes with sequences off")
	}
}

// TestSpaces: a space is created with the defaults of what is not given
// and the same rules whatever asks (CreateSpace, NewSpace.Space); one that
// exists, or a bad one, is refused by its name; spaces are read back.
func TestSpaces(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Spaces: sequencetest.NewMemStore(nil)})
	if err := svc.SpacesOff(); err != nil {
		t.Fatalf("SpacesOff with spaces on: %v", err)
	}
	sp, err := svc.CreateSpace(ctx, service.NewSpace{Name: "inbox"})
	if err != nil || sp.Step != sequence.DefaultStep || sp.Sections != sequence.DefaultSections {
		t.Fatalf("a space of defaults = %+v, %v", sp, err)
	}
	if sp, err := svc.CreateSpace(ctx, service.NewSpace{Name: "chat", Step: ptr(int64(10)), Sections: ptr(int64(4))}); err != nil || sp.Step != 10 || sp.Sections != 4 {
		t.Fatalf("a space given both = %+v, %v", sp, err)
	}
	_, err = svc.CreateSpace(ctx, service.NewSpace{Name: "inbox"})
	wantCode(t, "a space that exists", err, service.SpaceExists, `"inbox" already exists`)
	for what, ns := range map[string]service.NewSpace{
		"no sections":     {Name: "a", Sections: ptr(int64(0))},
		"too many":        {Name: "a", Sections: ptr(int64(sequence.MaxSections + 1))},
		"a step of 0":     {Name: "a", Step: ptr(int64(0))},
		"a negative step": {Name: "a", Step: ptr(int64(-5))},
	} {
		_, err := svc.CreateSpace(ctx, ns)
		wantCode(t, what, err, service.InvalidRequest, "")
		if _, err2 := ns.Space(); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: NewSpace.Space = %v, CreateSpace = %v; want the same refusal", what, err2, err)
		}
	}
	_, err = svc.CreateSpace(ctx, service.NewSpace{Name: ".."})
	wantCode(t, "a name a URL cannot address", err, service.InvalidSpace, "URL path")
	_, err = svc.CreateSpace(ctx, service.NewSpace{Name: "inbox "})
	wantCode(t, "a name ending in a space", err, service.InvalidSpace, "trailing spaces")

	if sp, err := svc.Space(ctx, "chat"); err != nil || sp.Step != 10 {
		t.Fatalf("Space = %+v, %v", sp, err)
	}
	_, err = svc.Space(ctx, "nope")
	wantCode(t, "an unknown space", err, service.UnknownSpace, `"nope" does not exist`)
	_, err = svc.Space(ctx, "")
	wantCode(t, "an empty name", err, service.InvalidSpace, "empty")
	if all, err := svc.Spaces(ctx); err != nil || len(all) != 2 || all[0].Name != "chat" || all[1].Name != "inbox" {
		t.Fatalf("Spaces = %+v, %v", all, err)
	}

	off := service.New(service.Config{})
	_, err = off.CreateSpace(ctx, service.NewSpace{Name: "inbox"})
	wantCode(t, "CreateSpace with spaces off", err, service.NotFound, "sequences are not enabled")
	_, err = off.Space(ctx, "inbox")
	wantCode(t, "Space with spaces off", err, service.NotFound, "sequences are not enabled")
	_, err = off.Spaces(ctx)
	wantCode(t, "Spaces with spaces off", err, service.NotFound, "sequences are not enabled")
}

// forwardedVia is a call forwarded here by another instance.
type forwardedVia struct{}

func (forwardedVia) Forwarded() bool { return true }

// second is the error of a call that returns a value and an error.
func second[T any](_ T, err error) error { return err }
