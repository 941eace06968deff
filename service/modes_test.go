package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// TestSnowflakeAndUUIDs: snowflake ids and UUIDs come from their
// generators, a batch increasing; an id is decoded back to the worker
// that made it, a negative one refused as invalid_id; each mode off
// answers not_found by its name, before anything is read.
func TestSnowflakeAndUUIDs(t *testing.T) {
	ctx := context.Background()
	gen, err := snowflake.New(ctx, snowflake.Settings{WorkerID: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gen.Close(context.Background()) })
	svc := service.New(service.Config{Snowflake: gen, UUIDs: uuidv7.New(uuidv7.Options{})})

	id, err := svc.SnowflakeID(ctx)
	if err != nil || id <= 0 {
		t.Fatalf("SnowflakeID = %d, %v", id, err)
	}
	ids, err := svc.SnowflakeIDs(ctx, 5)
	if err != nil || len(ids) != 5 {
		t.Fatalf("SnowflakeIDs = %v, %v", ids, err)
	}
	for i, v := range ids {
		if v <= id || i > 0 && v <= ids[i-1] {
			t.Fatalf("SnowflakeIDs after %d = %v: not increasing", id, ids)
		}
	}
	if d, err := svc.DecodeSnowflake(ids[4]); err != nil || d.WorkerID != 7 || d.ID != ids[4] || time.Since(d.Time) > time.Minute {
		t.Fatalf("DecodeSnowflake = %+v, %v", d, err)
	}
	_, err = svc.DecodeSnowflake(-1)
	wantCode(t, "a negative id", err, service.InvalidID, "non-negative")

	u, err := svc.UUID()
	if err != nil || u.Version() != 7 {
		t.Fatalf("UUID = %v, %v", u, err)
	}
	us, err := svc.UUIDs(3)
	if err != nil || len(us) != 3 || us[0].String() <= u.String() || us[1].String() <= us[0].String() || us[2].String() <= us[1].String() {
		t.Fatalf("UUIDs after %v = %v, %v; want 3 increasing", u, us, err)
	}

	off := service.New(service.Config{})
	for what, err := range map[string]error{
		"SnowflakeID":     second(off.SnowflakeID(ctx)),
		"SnowflakeIDs":    second(off.SnowflakeIDs(ctx, 2)),
		"DecodeSnowflake": second(off.DecodeSnowflake(1)),
		"Off(snowflake)":  off.Off(service.ModeSnowflake),
	} {
		wantCode(t, what+" with snowflake off", err, service.NotFound, "snowflake mode is not enabled")
	}
	for what, err := range map[string]error{
		"UUID":      second(off.UUID()),
		"UUIDs":     second(off.UUIDs(2)),
		"Off(uuid)": off.Off(service.ModeUUID),
	} {
		wantCode(t, what+" with UUIDs off", err, service.NotFound, "uuid mode is not enabled")
	}
	wantCode(t, "Off(segment)", off.Off(service.ModeSegment), service.NotFound, "segment mode is not enabled")
	wantCode(t, "SegmentCall with segment off", off.SegmentCall("orders"), service.NotFound, "segment mode is not enabled")
	if err := svc.Off(service.ModeSnowflake); err != nil {
		t.Errorf("Off(snowflake) where it is on: %v", err)
	}
	if p := svc.Parts(); p.Snowflake == nil || p.UUIDs == nil || p.Segments != nil || p.Sequences != nil {
		t.Errorf("Parts = %+v, want snowflake and UUIDs only", p)
	}
}

// TestSegmentCall: a call for a tag is checked before its count is read:
// segment mode, then the name.
func TestSegmentCall(t *testing.T) {
	svc := service.New(service.Config{Segments: newParts(t, false).alloc})
	if err := svc.SegmentCall("orders"); err != nil {
		t.Fatalf("a good tag: %v", err)
	}
	wantCode(t, "an empty tag", svc.SegmentCall(""), service.InvalidTag, "empty")
	wantCode(t, "bad UTF-8", svc.SegmentCall("\xff"), service.InvalidTag, "UTF-8")
}

// TestToken: the admin token is admitted only as "Bearer <token>", the
// scheme in any case and the token exact.
func TestToken(t *testing.T) {
	tok := service.NewToken("s3cret")
	for header, want := range map[string]error{
		"Bearer s3cret":   nil,
		"bearer s3cret":   nil,
		"BEARER  s3cret ": nil,
		"Bearer s3cre":    service.ErrWrongToken,
		"Bearer S3CRET":   service.ErrWrongToken,
		"Bearer ":         service.ErrWrongToken,
		"Basic s3cret":    service.ErrNoToken,
		"s3cret":          service.ErrNoToken,
		"":                service.ErrNoToken,
	} {
		if got := tok.Check(header); got != want {
			t.Errorf("Check(%q) = %v, want %v", header, got, want)
		}
	}
}

// TestRequestMetrics: each request is counted and timed in the series of
// its key; two edges' metrics built on one registry share the series.
func TestRequestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	names := service.MetricNames{Requests: "test_requests_total", RequestsHelp: "Requests.", Duration: "test_request_seconds", DurationHelp: "Latency."}
	values := func(k [2]string) []string { return k[:] }
	a := service.NewRequestMetrics(reg, names, []string{"route", "code"}, values)
	b := service.NewRequestMetrics(reg, names, []string{"route", "code"}, values)
	a.Observe([2]string{"/get", "200"}, time.Millisecond)
	a.Observe([2]string{"/get", "200"}, 3*time.Millisecond)
	b.Observe([2]string{"/get", "200"}, 10*time.Second)
	a.Observe([2]string{"/get", "404"}, time.Millisecond)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" {
					key += " " + l.GetValue()
				}
			}
			if c := m.GetCounter(); c != nil {
				got[key] = c.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				got[key] = float64(h.GetSampleCount())
			}
		}
	}
	want := map[string]float64{"test_requests_total 200": 3, "test_requests_total 404": 1, "test_request_seconds 200": 3, "test_request_seconds 404": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
