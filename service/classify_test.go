package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code string
		msg  string // a part of the message
	}{
		{"unknown tag", service.WithTag("orders", segment.ErrUnknownTag), service.UnknownTag, `"orders" does not exist`},
		{"tag exists", service.WithTag("orders", segment.ErrTagExists), service.TagExists, `"orders" already exists`},
		{"case twin", service.WithTag("Orders", &segment.ExistsError{Name: "Orders", Existing: "orders"}), service.TagExists,
			`"Orders" already exists as "orders": tag names are unique whatever their case`},
		{"collation twin", service.WithTag("ordérs", &segment.ExistsError{Name: "ordérs", Existing: "orders"}), service.TagExists,
			`"ordérs" already exists as "orders": the database's collation`},
		{"invalid tag", fmt.Errorf("%w: empty", segment.ErrInvalidTag), service.InvalidTag, "empty"},
		{"invalid step", service.WithTag("orders", segment.ErrInvalidStep), service.InvalidRequest, segment.ErrInvalidStep.Error()},
		{"invalid id", snowflake.ErrInvalidID, service.InvalidID, ""},
		{"exhausted", service.WithTag("orders", segment.ErrExhausted), service.TagExhausted, "last id"},
		{"misconfigured", service.WithTag("orders", segment.ErrMisconfigured), service.TagMisconfigured, "step below 1"},
		{"store down", service.WithTag("orders", segment.ErrUnavailable), service.Unavailable, "retry later"},
		{"clock", snowflake.ErrClockBackwards, service.Unavailable, "retry later"},
		{"closed", segment.ErrClosed, service.Unavailable, "shutting down"},
		{"deadline", context.DeadlineExceeded, service.Unavailable, "timed out"},
		{"bug", errors.New("dial tcp 10.0.0.1:3306: secret"), service.Internal, "internal error"},
		{"invalid format", fmt.Errorf("%w: no {seq}", bizid.ErrInvalidFormat), service.InvalidFormat, "no {seq}"},
		{"format fixed", service.WithTag("orders", bizid.ErrFixed), service.FormatFixed, bizid.ErrFixed.Error()},
		{"not numeric", service.WithTag("orders", bizid.ErrNotNumeric), service.NotNumeric, `"orders"`},
		{"period closed", service.WithTag("orders", bizid.ErrPeriodClosed), service.PeriodClosed, "period closed"},
		{"sequence full", service.WithTag("orders", bizid.ErrSequenceFull), service.SequenceFull, `"orders"`},
		{"opaque exhausted", service.WithTag("u", bizid.ErrExhausted), service.TagExhausted, "last id"},
		{"no key", service.WithTag("u", bizid.ErrNoKey), service.Unavailable, "key"},
		{"not opaque", service.WithTag("orders", bizid.ErrNotOpaque), service.InvalidRequest, "not opaque"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := service.Classify(tc.err)
			if code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("Classify = %s %q, want %s and a message with %q", code, msg, tc.code, tc.msg)
			}
			if strings.Contains(msg, "10.0.0.1") {
				t.Errorf("message %q leaks the error's detail", msg)
			}
		})
	}
	if service.WithTag("x", nil) != nil {
		t.Error("WithTag(tag, nil) is not nil")
	}
}
