package service

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"
)

// Token is a bearer token, kept as its SHA-256 so that a guess is compared
// in the same time whatever its length or content.
type Token [32]byte

// NewToken returns the token whose text is s.
func NewToken(s string) Token { return sha256.Sum256([]byte(s)) }

// Errors of Token.Check; both are the code unauthorized.
var (
	ErrNoToken    = errors.New("missing bearer token")
	ErrWrongToken = errors.New("wrong bearer token")
)

// Check admits the value of an Authorization header that carries the
// token: "Bearer <token>", the scheme in any case.
func (t Token) Check(authorization string) error {
	scheme, got, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ErrNoToken
	}
	sum := NewToken(strings.TrimSpace(got))
	if subtle.ConstantTimeCompare(sum[:], t[:]) != 1 {
		return ErrWrongToken
	}
	return nil
}
