package service

import "fmt"

// Error is an answer an edge's shared code decided: its code and message
// go to the client as they are, by Classify, with the code's HTTP status
// or gRPC code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns the error of code whose message is the formatted text.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
