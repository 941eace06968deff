package service

import "context"

// TakeOwned takes n numbers of an ordered tag from its owner as a
// coalesced forward does.
func (f *Forwarder) TakeOwned(ctx context.Context, addr, tag string, n int) ([]int64, error) {
	return f.takeOwned(ctx, takeKey{addr: addr, tag: tag}, n)
}

// KeptNames is how many names the registry keeps.
func (r *Registry) KeptNames() int { return len(*r.known.Load()) }
