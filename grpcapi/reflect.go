package grpcapi

import (
	"context"
	"fmt"
	"sync/atomic"

	"connectrpc.com/connect"
)

// MaxReflectionStreams is the most reflection streams (grpcurl, a
// debugger) held at once, both versions together: a stream lasts as long
// as its client wants, and each holds a goroutine.
const MaxReflectionStreams = 100

// boundedStreams refuses a streaming call with ResourceExhausted while
// most of its calls are open.
type boundedStreams struct {
	open *atomic.Int64
	most int64
	what string
}

func newBoundedStreams(most int64, what string) boundedStreams {
	return boundedStreams{open: new(atomic.Int64), most: most, what: what}
}

func (boundedStreams) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }

func (boundedStreams) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (b boundedStreams) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if b.open.Add(1) > b.most {
			b.open.Add(-1)
			return connect.NewError(connect.CodeResourceExhausted,
				fmt.Errorf("this instance holds %d %s streams, the most it takes: retry later", b.most, b.what))
		}
		defer b.open.Add(-1)
		return next(ctx, conn)
	}
}
