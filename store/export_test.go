package store

// ErrorKind is how a call treats err: "conflict" (run it again),
// "unreachable" (the database or the node did not take it) or "permanent"
// (the statement's answer).
func ErrorKind(err error) string {
	switch classify(err) {
	case conflict:
		return "conflict"
	case unreachable:
		return "unreachable"
	}
	return "permanent"
}
