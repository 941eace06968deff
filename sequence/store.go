package sequence

import (
	"context"
	"time"
)

// Member is an instance taking part in serving sequences.
type Member struct {
	// ID tells this process apart from every other, restarts included
	// (a random token).
	ID string
	// Addr is where other instances reach it: host:port.
	Addr string
}

// SectionID names a section: of a space, or an ordered tag's lease
// (Section OrderedSection).
type SectionID struct {
	Space   string
	Section int
}

// Acquired is what AcquireSections answers for a section: OK when the
// lease is the member's now, and then the section's max_seq.
type Acquired struct {
	MaxSeq int64
	OK     bool
}

// SectionRow is a section's lease as the store has it.
type SectionRow struct {
	Space   string
	Section int
	Holder  string // the member ID of the holder; "" when none
	Addr    string // the holder's address
	// Live: the lease has not run out by the store's clock.
	Live bool
	// Left is how long a live lease runs on, by the store's clock, from a
	// moment no later than the read: a time planned as Left after the
	// read returned is at or after the lease's end. 0 when not live.
	Left time.Duration
}

// Store keeps spaces, members and sections. Expiry is judged by the
// store's clock, so instances on different machines agree on it.
type Store interface {
	// CreateSpace creates a space and its sections, each with max_seq 0,
	// at once; ErrSpaceExists when the name is taken.
	CreateSpace(ctx context.Context, s Space) (Space, error)
	// Space reads one space, or ErrUnknownSpace.
	Space(ctx context.Context, name string) (Space, error)
	// Spaces reads every space.
	Spaces(ctx context.Context) ([]Space, error)

	// Heartbeat records m as a live member for ttl.
	Heartbeat(ctx context.Context, m Member, ttl time.Duration) error
	// Leave removes a member.
	Leave(ctx context.Context, id string) error
	// Members reads the live members.
	Members(ctx context.Context) ([]Member, error)

	// Sections reads the lease of every section of every space.
	Sections(ctx context.Context) ([]SectionRow, error)
	// RenewSections extends by ttl, from the store's now, every lease that
	// holder holds, in one statement.
	RenewSections(ctx context.Context, holder string, ttl time.Duration) error
	// AcquireSection takes a section's lease for m for ttl when it has run
	// out, was cleared, or is m's already, and answers the section's
	// max_seq from the same statement. ok is false when another holds it.
	AcquireSection(ctx context.Context, space string, section int, m Member, ttl time.Duration) (maxSeq int64, ok bool, err error)
	// AcquireSections is AcquireSection for each of secs, in a number of
	// statements that does not grow with theirs (up to a few hundred):
	// one answer per section, in their order.
	AcquireSections(ctx context.Context, secs []SectionID, m Member, ttl time.Duration) ([]Acquired, error)
	// ReleaseSection clears holder's lease of a section, so that another
	// may take it at once.
	ReleaseSection(ctx context.Context, space string, section int, holder string) error
	// ReleaseSections clears every lease holder holds, in one statement.
	ReleaseSections(ctx context.Context, holder string) error
	// RaiseMax raises the section's max_seq by by, only while holder holds
	// it, and answers the new value from the same statement. It returns
	// ErrLeaseLost when another holds the section, ErrExhausted when the
	// sum would pass the int64 maximum.
	RaiseMax(ctx context.Context, space string, section int, holder string, by int64) (int64, error)
}
