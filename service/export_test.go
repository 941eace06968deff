package service

import "context"

// MaxForwardedBody is the largest answer of an owner a forward takes.
const MaxForwardedBody = maxForwardedBody

// TakeOwned takes n numbers from an owner as a coalesced forward does.
func (f *Forwarder) TakeOwned(ctx context.Context, addr, path, member string, n int) ([]int64, error) {
	return f.takeOwned(ctx, addr, path, member, n)
}
