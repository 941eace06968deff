package grpcapi

import (
	"context"
	"slices"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// health answers grpc.health.v1.Health, for Kubernetes gRPC probes and
// load balancers: the service "" is the process (serving while it runs: a
// liveness probe), and each of leaf's services is serving while the
// instance can issue ids, as /readyz reports it (a readiness probe).
type health struct {
	ready    func(ctx context.Context) error
	services []string
}

func (h *health) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	switch {
	case req.Service == "":
		return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
	case !slices.Contains(h.services, req.Service):
		return nil, connect.NewError(connect.CodeNotFound, plain("unknown service "+req.Service))
	case h.ready != nil && h.ready(ctx) != nil:
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}
