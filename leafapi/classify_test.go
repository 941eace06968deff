package leafapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/leafapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code string
		msg  string // a part of the message
	}{
		{"unknown tag", leafapi.WithTag("orders", segment.ErrUnknownTag), leafapi.UnknownTag, `"orders" does not exist`},
		{"tag exists", leafapi.WithTag("orders", segment.ErrTagExists), leafapi.TagExists, `"orders" already exists`},
		{"invalid tag", fmt.Errorf("%w: empty", segment.ErrInvalidTag), leafapi.InvalidTag, "empty"},
		{"invalid step", leafapi.WithTag("orders", segment.ErrInvalidStep), leafapi.InvalidRequest, segment.ErrInvalidStep.Error()},
		{"invalid id", snowflake.ErrInvalidID, leafapi.InvalidID, ""},
		{"exhausted", leafapi.WithTag("orders", segment.ErrExhausted), leafapi.TagExhausted, "last id"},
		{"misconfigured", leafapi.WithTag("orders", segment.ErrMisconfigured), leafapi.TagMisconfigured, "step below 1"},
		{"store down", leafapi.WithTag("orders", segment.ErrUnavailable), leafapi.Unavailable, "retry later"},
		{"clock", snowflake.ErrClockBackwards, leafapi.Unavailable, "retry later"},
		{"closed", segment.ErrClosed, leafapi.Unavailable, "shutting down"},
		{"deadline", context.DeadlineExceeded, leafapi.Unavailable, "timed out"},
		{"bug", errors.New("dial tcp 10.0.0.1:3306: secret"), leafapi.Internal, "internal error"},
		{"invalid format", fmt.Errorf("%w: no {seq}", bizid.ErrInvalidFormat), leafapi.InvalidFormat, "no {seq}"},
		{"format fixed", leafapi.WithTag("orders", bizid.ErrFixed), leafapi.FormatFixed, bizid.ErrFixed.Error()},
		{"not numeric", leafapi.WithTag("orders", bizid.ErrNotNumeric), leafapi.NotNumeric, `"orders"`},
		{"period closed", leafapi.WithTag("orders", bizid.ErrPeriodClosed), leafapi.PeriodClosed, "period closed"},
		{"sequence full", leafapi.WithTag("orders", bizid.ErrSequenceFull), leafapi.SequenceFull, `"orders"`},
		{"opaque exhausted", leafapi.WithTag("u", bizid.ErrExhausted), leafapi.TagExhausted, "last id"},
		{"no key", leafapi.WithTag("u", bizid.ErrNoKey), leafapi.Unavailable, "key"},
		{"not opaque", leafapi.WithTag("orders", bizid.ErrNotOpaque), leafapi.InvalidRequest, "not opaque"},
		{"issuer closed", bizid.ErrClosed, leafapi.Unavailable, "shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := leafapi.Classify(tc.err)
			if code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("Classify = %s %q, want %s and a message with %q", code, msg, tc.code, tc.msg)
			}
			if strings.Contains(msg, "10.0.0.1") {
				t.Errorf("message %q leaks the error's detail", msg)
			}
		})
	}
	if leafapi.WithTag("x", nil) != nil {
		t.Error("WithTag(tag, nil) is not nil")
	}
}
