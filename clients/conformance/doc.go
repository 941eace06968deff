// Package conformance holds the conformance suite of leaf's clients: what
// every client does, as data (cases.json), and the runner that checks it
// (conformance_test.go) against real `leaf serve` processes, each behind a
// proxy of the suite's that counts requests and answers errors on demand.
// Each client has a small driver (drivers/) that the runner starts as a
// subprocess and talks to over stdin and stdout; README.md tells the
// protocol, for the driver of a new client.
//
// The Go client (package client) is the reference: the suite passes with
// its driver first, and the other clients are held to the same cases.
package conformance
