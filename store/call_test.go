package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestFailedAllocationYieldsNoRange makes the allocation statement fail
// inside the database, and also run past the store's deadline: neither
// gives a range, and what the database did commit is never handed out by
// a later allocation.
func TestFailedAllocationYieldsNoRange(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	setup := storetest.Open(t, store.MySQL, dsn)
	s, err := store.OpenMySQL(ctx, dsn, store.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	createTag(t, setup, "fails", 1, 100)
	createTag(t, setup, "slow", 1, 100)
	for _, q := range []string{
		`CREATE TRIGGER leaf_test_fail BEFORE UPDATE ON leaf_alloc FOR EACH ROW
BEGIN
  IF NEW.biz_tag = 'fails' AND NEW.max_id > 200 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test';
  END IF;
  IF NEW.biz_tag = 'slow' AND NEW.max_id = 201 THEN
    SET @leaf_test_slept = SLEEP(1);
  END IF;
END`,
	} {
		if _, err := setup.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	first, err := s.Allocate(ctx, "fails", 0)
	if err != nil || first.MaxID != 101 {
		t.Fatalf("first allocation = %+v, %v", first, err)
	}
	for range 3 {
		if a, err := s.Allocate(ctx, "fails", 0); err == nil {
			t.Fatalf("allocation refused by the database gave %+v", a)
		}
	}
	if tag, _ := setup.Tag(ctx, "fails"); tag.MaxID != 101 {
		t.Fatalf("max_id after refused allocations = %d, want 101", tag.MaxID)
	}

	if _, err := s.Allocate(ctx, "slow", 0); err != nil { // 1..100
		t.Fatal(err)
	}
	a, err := s.Allocate(ctx, "slow", 0) // raises to 201 after the deadline
	if err == nil || !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("allocation past the deadline = %+v, %v; want ErrStoreUnavailable", a, err)
	}
	// The database finished the statement after the client gave up: that
	// range is lost, never handed out.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if tag, _ := setup.Tag(ctx, "slow"); tag.MaxID == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow statement never committed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for s.Health().Up == false && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the probe brings the store back
	}
	next, err := s.Allocate(ctx, "slow", 0)
	if err != nil {
		t.Fatal(err)
	}
	if next.Start() < 201 {
		t.Fatalf("allocation after the lost one starts at %d, inside the range the database raised past", next.Start())
	}
}

// TestRowLockedByAnother holds the row of one tag locked, as a long
// transaction of someone else's would: its allocations fail after the
// deadline, retried as lock waits, without taking the store down for
// every other tag. (The probe that clears the suspicion a timed-out call
// raises takes milliseconds; other tags are served again as soon as it
// has answered.)
func TestRowLockedByAnother(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	setup := storetest.Open(t, store.MySQL, dsn)
	var changes atomic.Int32
	s, err := store.OpenMySQL(ctx, dsn, store.Options{Timeout: 1500 * time.Millisecond,
		OnHealth: func(store.Health) { changes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	createTag(t, setup, "locked", 1, 10)
	createTag(t, setup, "free", 1, 10)

	tx, err := setup.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'locked' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, "locked", 0); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("Allocate of a locked row = %v, want ErrStoreUnavailable", err)
	}
	var (
		a        segment.Allocation
		deadline = time.Now().Add(time.Second)
	)
	for {
		if a, err = s.Allocate(ctx, "free", 0); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil || a.MaxID != 11 {
		t.Fatalf("Allocate of another tag meanwhile = %+v, %v", a, err)
	}
	if !s.Health().Up || changes.Load() != 0 {
		t.Fatalf("a row locked by another took the whole store down (%d health changes)", changes.Load())
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// A statement that was still waiting on the server when the client
	// gave up may have run once the lock went: its range is lost, never
	// handed out.
	if a, err := s.Allocate(ctx, "locked", 0); err != nil || a.Start() < 11 {
		t.Fatalf("Allocate once the lock is gone = %+v, %v", a, err)
	}
}
