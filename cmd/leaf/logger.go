package main

import (
	"errors"
	"io"
	"log/slog"
	"strings"
)

// newLogger returns the slog logger writing to w in format "text" or
// "json" at level.
func newLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logFormatFlag is --log-format: text or json.
type logFormatFlag string

func (f logFormatFlag) String() string { return string(f) }

func (f *logFormatFlag) Set(s string) error {
	if s != "text" && s != "json" {
		return errors.New("want text or json")
	}
	*f = logFormatFlag(s)
	return nil
}

// logLevelFlag is --log-level: debug, info, warn or error, as
// slog.Level reads them.
type logLevelFlag slog.Level

func (l logLevelFlag) String() string { return strings.ToLower(slog.Level(l).String()) }

func (l *logLevelFlag) Set(s string) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	*l = logLevelFlag(level)
	return nil
}
