package leafapi

// HeaderForwarded marks a request that an instance forwarded to the owner
// of a sequence section or an ordered tag, over the HTTP API. An instance
// that gets one for a section or tag it does not own answers 503 with
// Retry-After rather than forward it again: a request hops at most once.
// The HTTP routes and the gRPC calls forward the same way.
const HeaderForwarded = "Leaf-Forwarded"
