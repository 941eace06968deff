package grpcapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/leafid/leaf/service"
)

// errorDomain is the domain of every google.rpc.ErrorInfo leaf sends.
const errorDomain = "leaf"

// retryAfter is the delay an unavailable error suggests, as the HTTP API's
// Retry-After does.
const retryAfter = time.Second

// maxMessageBytes bounds a request message, as the HTTP API bounds a body.
const maxMessageBytes = 64 << 10

// fail is an error this edge decided: code is one of service's.
func fail(code, format string, args ...any) *connect.Error {
	return withCode(code, fmt.Sprintf(format, args...))
}

// withCode builds the error of a service code: its gRPC code, the message,
// and the code itself as an ErrorInfo's reason, so a client can tell apart
// what one gRPC code holds (invalid_tag from invalid_count).
func withCode(code, msg string) *connect.Error {
	e := connect.NewError(service.GRPCCode(code), plain(msg))
	if d, err := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: strings.ToUpper(code), Domain: errorDomain}); err == nil {
		e.AddDetail(d)
	}
	if code == service.Unavailable {
		if d, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)}); err == nil {
			e.AddDetail(d)
		}
	}
	return e
}

// plain is an error of a fixed message.
type plain string

func (p plain) Error() string { return string(p) }

// toError turns an error of the domain into what the client sees, logging
// what no client can act on.
func toError(ctx context.Context, log *slog.Logger, procedure string, err error) error {
	code, msg := service.Classify(err)
	switch code {
	case service.Internal:
		log.ErrorContext(ctx, "call failed", "procedure", procedure, "err", err)
	case service.Unavailable:
		// Logged where it starts and ends (the store, the loads, the
		// lease), not once per call.
		log.DebugContext(ctx, "call unavailable", "procedure", procedure, "err", err)
	}
	return withCode(code, msg)
}

// recoverPanic answers a panic in a handler with internal, and logs it
// with its stack. http.ErrAbortHandler is re-raised by connect itself.
func recoverPanic(log *slog.Logger) func(context.Context, connect.Spec, http.Header, any) error {
	return func(ctx context.Context, spec connect.Spec, _ http.Header, r any) error {
		log.ErrorContext(ctx, "call failed", "procedure", spec.Procedure, "err", fmt.Sprintf("panic: %v", r), "stack", string(debug.Stack()))
		return withCode(service.Internal, "internal error")
	}
}
