package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/bizid"
)

// opaqueKeysFlag is --opaque-key: the fleet's keys of opaque tags,
// separated by commas, the first for new tags and the others for the tags
// made with them before a rotation. Its String never shows a key: the
// flag package prints it in help texts.
type opaqueKeysFlag struct{ keys [][]byte }

func (f *opaqueKeysFlag) String() string {
	if f == nil || len(f.keys) == 0 {
		return ""
	}
	return fmt.Sprintf("(%d keys)", len(f.keys))
}

func (f *opaqueKeysFlag) Set(s string) error {
	var keys [][]byte
	for i, k := range strings.Split(s, ",") {
		if len(k) < bizid.MinKeyLen {
			// The error names the key by its place, never by its value.
			return valueError{"(secret)", fmt.Errorf("key %d has %d bytes; an opaque key needs at least %d", i+1, len(k), bizid.MinKeyLen)}
		}
		keys = append(keys, []byte(k))
	}
	f.keys = keys
	return nil
}

// periodGraceFlag is --period-grace: at least bizid.MinGrace.
type periodGraceFlag time.Duration

func (d periodGraceFlag) String() string { return time.Duration(d).String() }
func (d periodGraceFlag) Get() any       { return time.Duration(d) }

func (d *periodGraceFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < bizid.MinGrace {
		return valueError{v.String(), fmt.Errorf("want at least %v, well past the clock differences of a fleet", bizid.MinGrace)}
	}
	*d = periodGraceFlag(v)
	return nil
}
