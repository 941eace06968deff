package main

import (
	"fmt"
	"strconv"
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

// givenText is a flag of a tag's settings that counts once given, even
// empty (--format=): the admin API refuses a setting given empty, and so
// does the command line, where a flag left out is no setting at all.
type givenText struct{ to **string }

func (f givenText) String() string {
	if f.to == nil || *f.to == nil {
		return ""
	}
	return **f.to
}

func (f givenText) Set(s string) error {
	*f.to = &s
	return nil
}

// givenInt is givenText for a number (--opaque=0 is given, and refused);
// want says what a value that is no number should be.
type givenInt struct {
	to   **int64
	want string
}

func (f givenInt) String() string {
	if f.to == nil || *f.to == nil {
		return ""
	}
	return strconv.FormatInt(**f.to, 10)
}

func (f givenInt) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return valueError{s, fmt.Errorf("want %s", f.want)}
	}
	*f.to = &v
	return nil
}
