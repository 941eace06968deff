package grpcapi

// Watching reports how many health Watch streams h has open, and whether
// readiness is being read for them.
func Watching(h *Handler) (streams int, polling bool) {
	h.health.mu.Lock()
	defer h.health.mu.Unlock()
	return len(h.health.watches), h.health.stopPoll != nil
}
