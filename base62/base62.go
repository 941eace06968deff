// Package base62 writes non-negative 64-bit ids as fixed-width base62 text
// that sorts, byte by byte, in the order of the numbers: 11 characters of
// 0-9 A-Z a-z, the digits in ASCII order, padded on the left with '0'.
// It is short and safe in URLs and file names, for ids that users see.
package base62

import (
	"errors"
	"fmt"
	"math"
)

// Width is the length of every encoded id: 62^11 > 2^63 > 62^10.
const Width = 11

// alphabet is in ASCII order, so that text order is number order.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ErrInvalid: text that is not the encoding of a non-negative int64.
var ErrInvalid = errors.New("invalid base62 id")

// digit maps a byte to its value, or -1.
var digit = func() (d [256]int8) {
	for i := range d {
		d[i] = -1
	}
	for i := range len(alphabet) {
		d[alphabet[i]] = int8(i)
	}
	return d
}()

// Append appends the Width-character encoding of id to b. A negative id
// has no encoding; Append panics on one, since ids are never negative.
func Append(b []byte, id int64) []byte {
	if id < 0 {
		panic(fmt.Sprintf("base62: negative id %d", id))
	}
	var buf [Width]byte
	for i := Width - 1; i >= 0; i-- {
		buf[i] = alphabet[id%62]
		id /= 62
	}
	return append(b, buf[:]...)
}

// Encode returns the Width-character encoding of id (see Append).
func Encode(id int64) string { return string(Append(nil, id)) }

// Decode reads an id written by Encode: exactly Width characters of the
// alphabet, at most the encoding of the int64 maximum.
func Decode(s string) (int64, error) {
	if len(s) != Width {
		return 0, fmt.Errorf("%w: %d characters, want %d", ErrInvalid, len(s), Width)
	}
	var v uint64
	for i := range len(s) {
		d := digit[s[i]]
		if d < 0 {
			return 0, fmt.Errorf("%w: %q at %d is not one of 0-9 A-Z a-z", ErrInvalid, rune(s[i]), i)
		}
		v = v*62 + uint64(d) // 62^11 < 2^66: checked below before it can wrap
		if i == Width-2 && v > math.MaxInt64/62 {
			return 0, fmt.Errorf("%w: above the int64 maximum", ErrInvalid)
		}
	}
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: above the int64 maximum", ErrInvalid)
	}
	return int64(v), nil
}
