package grpcapi_test

import (
	"context"
	"errors"
	"testing"

	"connectrpc.com/connect"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

const opaqueKey = "the fleet's opaque key for grpc tests"

// TestBusinessTags: over every protocol, an opaque tag's ids are its
// scrambled numbers, unique and revealed by the key; a formatted tag's
// calls and an opaque tag's ranges are not_numeric (FailedPrecondition);
// plain tags are served as before.
func TestBusinessTags(t *testing.T) {
	var cipher *bizid.Cipher
	f := newFixture(t, func(cfg *config) {
		rows := cfg.svc.Tags.(*segmenttest.MemStore)
		biz := bizidtest.New(rows)
		ctx := context.Background()
		for name, set := range map[string]bizid.Settings{
			"fmt": {Format: "ORD-{date:20060102}-{seq:6}", Reset: bizid.Day},
			"opq": {OpaqueBits: bizid.Bits53, KeyID: bizid.KeyID([]byte(opaqueKey))},
		} {
			if _, err := biz.CreateSpecialTag(ctx, segment.Tag{Name: name, MaxID: 1, Step: 100}, set); err != nil {
				t.Fatal(err)
			}
		}
		is, err := bizid.New(bizid.Options{Store: biz, IDs: cfg.svc.Segments.(*segment.Allocator), Keys: [][]byte{[]byte(opaqueKey)}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.svc.Biz, cfg.svc.Kinds = is, service.NewRegistry(biz, is, nil)
		if cipher, err = bizid.NewCipher([]byte(opaqueKey), bizid.Bits53); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	seen := map[int64]bool{}
	numbers := map[int64]bool{}
	take := func(id int64) {
		t.Helper()
		n, err := cipher.Decode(id)
		if err != nil || seen[id] || numbers[n] {
			t.Fatalf("id %d (number %d, %v) seen before", id, n, err)
		}
		seen[id], numbers[n] = true, true
	}
	for proto, c := range f.idClients(t) {
		t.Run(proto, func(t *testing.T) {
			one, err := c.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "opq"}))
			if err != nil {
				t.Fatal(err)
			}
			take(one.Msg.GetId())
			batch, err := c.BatchSegmentIds(ctx, connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "opq", Count: 5}))
			if err != nil || len(batch.Msg.GetIds()) != 5 {
				t.Fatalf("batch: %v %v", batch, err)
			}
			for _, id := range batch.Msg.GetIds() {
				take(id)
			}
			for name, call := range map[string]func() error{
				"get fmt": func() error {
					_, err := c.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "fmt"}))
					return err
				},
				"batch fmt": func() error {
					_, err := c.BatchSegmentIds(ctx, connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "fmt", Count: 2}))
					return err
				},
				"range opq": func() error {
					_, err := c.GetSegmentRange(ctx, connect.NewRequest(&leafv1.GetSegmentRangeRequest{Tag: "opq", Count: 2}))
					return err
				},
			} {
				var ce *connect.Error
				if err := call(); !errors.As(err, &ce) || ce.Code() != connect.CodeFailedPrecondition {
					t.Errorf("%s: %v, want FailedPrecondition (not_numeric)", name, err)
				}
			}
			if _, err := c.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "orders"})); err != nil {
				t.Fatalf("plain tag: %v", err)
			}
		})
	}
	if len(numbers) != 4*6 {
		t.Fatalf("%d numbers, want %d", len(numbers), 4*6)
	}
}
