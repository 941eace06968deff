package grpcapi_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// invoke calls a unary procedure of leaf.v1 with google.golang.org/grpc.
func invoke[Res any](t *testing.T, cc *grpc.ClientConn, method string, req any, opts ...grpc.CallOption) (*Res, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := new(Res)
	err := cc.Invoke(ctx, method, req, res, opts...)
	return res, err
}

// TestGRPCClient: google.golang.org/grpc's client, over unencrypted
// HTTP/2 on the port of the HTTP API, takes ids of every kind.
func TestGRPCClient(t *testing.T) {
	f := newFixture(t, nil)
	cc := f.grpcConn(t)

	for want := int64(1); want <= 3; want++ {
		res, err := invoke[leafv1.GetSegmentIdResponse](t, cc, "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "orders"})
		if err != nil || res.GetId() != want {
			t.Fatalf("GetSegmentId = %d, %v; want %d", res.GetId(), err, want)
		}
	}
	batch, err := invoke[leafv1.BatchSegmentIdsResponse](t, cc, "/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: "orders", Count: 5})
	if err != nil || len(batch.GetIds()) != 5 || batch.GetIds()[0] != 4 || batch.GetIds()[4] != 8 || batch.GetTag() != "orders" {
		t.Fatalf("BatchSegmentIds = %v, %v", batch, err)
	}
	rng, err := invoke[leafv1.GetSegmentRangeResponse](t, cc, "/leaf.v1.IdService/GetSegmentRange", &leafv1.GetSegmentRangeRequest{Tag: "orders", Count: 100})
	if err != nil || rng.GetStart() != 9 || rng.GetCount() != 100 {
		t.Fatalf("GetSegmentRange = %v, %v", rng, err)
	}

	sf, err := invoke[leafv1.GetSnowflakeIdResponse](t, cc, "/leaf.v1.IdService/GetSnowflakeId", &leafv1.GetSnowflakeIdRequest{})
	if err != nil || sf.GetId() <= 0 {
		t.Fatalf("GetSnowflakeId = %v, %v", sf, err)
	}
	dec, err := invoke[leafv1.DecodeSnowflakeIdResponse](t, cc, "/leaf.v1.IdService/DecodeSnowflakeId", &leafv1.DecodeSnowflakeIdRequest{Id: sf.GetId()})
	if err != nil || dec.GetWorkerId() != 7 || dec.GetId() != sf.GetId() || dec.GetTime().AsTime().UnixMilli() != dec.GetTimestampMs() {
		t.Fatalf("DecodeSnowflakeId = %v, %v", dec, err)
	}
	if d := time.Since(dec.GetTime().AsTime()); d < -time.Second || d > time.Minute {
		t.Errorf("decoded time %v is not now", dec.GetTime().AsTime())
	}
	made := timestamppb.New(dec.GetTime().AsTime())
	bounds, err := invoke[leafv1.GetSnowflakeBoundsResponse](t, cc, "/leaf.v1.IdService/GetSnowflakeBounds", &leafv1.GetSnowflakeBoundsRequest{From: made, To: made})
	if err != nil || bounds.GetLowest() > sf.GetId() || bounds.GetHighest() < sf.GetId() || !bounds.GetLowestTime().AsTime().Equal(dec.GetTime().AsTime()) {
		t.Fatalf("GetSnowflakeBounds of the id's millisecond = %v, %v; want bounds around %d", bounds, err, sf.GetId())
	}
	layout, err := invoke[leafv1.GetSnowflakeLayoutResponse](t, cc, "/leaf.v1.IdService/GetSnowflakeLayout", &leafv1.GetSnowflakeLayoutRequest{})
	if err != nil || layout.GetTimeBits() != 41 || layout.GetWorkerBits() != 10 || layout.GetSequenceBits() != 12 || layout.GetTimeUnit() != "ms" {
		t.Fatalf("GetSnowflakeLayout = %v, %v", layout, err)
	}
	sfb, err := invoke[leafv1.BatchSnowflakeIdsResponse](t, cc, "/leaf.v1.IdService/BatchSnowflakeIds", &leafv1.BatchSnowflakeIdsRequest{Count: 10000})
	if err != nil || len(sfb.GetIds()) != 10000 || sfb.GetIds()[0] <= sf.GetId() {
		t.Fatalf("BatchSnowflakeIds: %d ids, %v", len(sfb.GetIds()), err)
	}

	u, err := invoke[leafv1.GetUuidResponse](t, cc, "/leaf.v1.IdService/GetUuid", &leafv1.GetUuidRequest{})
	if err != nil || len(u.GetUuid()) != 36 || u.GetUuid()[14] != '7' {
		t.Fatalf("GetUuid = %v, %v", u, err)
	}
	ud, err := invoke[leafv1.DecodeUuidResponse](t, cc, "/leaf.v1.IdService/DecodeUuid", &leafv1.DecodeUuidRequest{Uuid: u.GetUuid()})
	if err != nil || ud.GetVersion() != 7 || ud.GetUuid() != u.GetUuid() {
		t.Fatalf("DecodeUuid = %v, %v", ud, err)
	}
	ubo, err := invoke[leafv1.GetUuidBoundsResponse](t, cc, "/leaf.v1.IdService/GetUuidBounds", &leafv1.GetUuidBoundsRequest{From: ud.GetTime(), To: ud.GetTime()})
	if err != nil || ubo.GetLowest() > u.GetUuid() || ubo.GetHighest() < u.GetUuid() {
		t.Fatalf("GetUuidBounds of the UUID's millisecond = %v, %v; want bounds around %s", ubo, err, u.GetUuid())
	}
	ub, err := invoke[leafv1.BatchUuidsResponse](t, cc, "/leaf.v1.IdService/BatchUuids", &leafv1.BatchUuidsRequest{Count: 3})
	if err != nil || len(ub.GetUuids()) != 3 || !(ub.GetUuids()[0] < ub.GetUuids()[1] && ub.GetUuids()[1] < ub.GetUuids()[2]) {
		t.Fatalf("BatchUuids = %v, %v", ub, err)
	}
}

// TestGRPCHealth: the health service as Kubernetes' gRPC probe asks it:
// the process is serving while it runs, leaf's services while the
// instance is ready.
func TestGRPCHealth(t *testing.T) {
	f := newFixture(t, nil)
	hc := healthpb.NewHealthClient(f.grpcConn(t))
	check := func(service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		return res.GetStatus(), err
	}
	for _, svc := range []string{"", "leaf.v1.IdService", "leaf.v1.AdminService"} {
		if st, err := check(svc); err != nil || st != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, st, err)
		}
	}
	f.notReady.Store(true)
	if st, err := check("leaf.v1.IdService"); err != nil || st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("not ready: Check(leaf.v1.IdService) = %v, %v; want NOT_SERVING", st, err)
	}
	if st, err := check(""); err != nil || st != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("not ready: Check(\"\") = %v, %v; want SERVING (the process runs)", st, err)
	}
	if _, err := check("no.such.Service"); grpcCode(err) != "NotFound" {
		t.Errorf("Check(unknown service) = %v; want NotFound", err)
	}
}

// TestWorkerLeaseCalls: the worker-id leases over gRPC, on a real store:
// acquired with the reserve recorded, renewed, released; a lease renewed
// under another's token is FailedPrecondition with the reason LEASE_LOST.
func TestWorkerLeaseCalls(t *testing.T) {
	st := storetest.Open(t, store.SQLite, filepath.Join(t.TempDir(), "leaf.db"))
	f := newFixture(t, func(c *config) { c.svc.WorkerLeases = st })
	cc := f.grpcConn(t)
	reserve := time.Now().Add(20 * time.Second).UnixMilli()
	acquire := func(holder string) *leafv1.WorkerLease {
		t.Helper()
		res, err := invoke[leafv1.AcquireWorkerLeaseResponse](t, cc, "/leaf.v1.IdService/AcquireWorkerLease",
			&leafv1.AcquireWorkerLeaseRequest{Holder: holder, TtlMs: 30000, ReserveMs: reserve})
		if err != nil || res.GetLease().GetLease() == "" || res.GetLease().GetReserveMs() != reserve || res.GetLease().GetLayout().GetWorkerBits() != 10 {
			t.Fatalf("AcquireWorkerLease(%s) = %v, %v", holder, res, err)
		}
		return res.GetLease()
	}
	a, b := acquire("proc-a"), acquire("proc-b")
	if a.GetWorkerId() == b.GetWorkerId() {
		t.Fatalf("two holders, one worker id %d", a.GetWorkerId())
	}
	renewed, err := invoke[leafv1.RenewWorkerLeaseResponse](t, cc, "/leaf.v1.IdService/RenewWorkerLease",
		&leafv1.RenewWorkerLeaseRequest{WorkerId: a.GetWorkerId(), Lease: a.GetLease(), TtlMs: 30000, ReserveMs: reserve + 10000})
	if err != nil || renewed.GetLease().GetReserveMs() != reserve+10000 {
		t.Fatalf("RenewWorkerLease = %v, %v", renewed, err)
	}
	_, err = invoke[leafv1.RenewWorkerLeaseResponse](t, cc, "/leaf.v1.IdService/RenewWorkerLease",
		&leafv1.RenewWorkerLeaseRequest{WorkerId: a.GetWorkerId(), Lease: b.GetLease(), TtlMs: 30000, ReserveMs: reserve})
	if grpcCode(err) != "FailedPrecondition" || reason(err) != service.LeaseLost {
		t.Fatalf("a's id renewed with b's lease: %v; want FailedPrecondition, LEASE_LOST", err)
	}
	if _, err := invoke[leafv1.ReleaseWorkerLeaseResponse](t, cc, "/leaf.v1.IdService/ReleaseWorkerLease",
		&leafv1.ReleaseWorkerLeaseRequest{WorkerId: a.GetWorkerId(), Lease: a.GetLease(), LastMs: reserve}); err != nil {
		t.Fatalf("ReleaseWorkerLease: %v", err)
	}
}
