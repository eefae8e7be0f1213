package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"

// The Go function of logexport.go, as libcuzk's log sink type (cgo declares exported Go
// functions without const).
extern void cuzkGoLog(int level, char *target, char *message, void *user);
static cuzk_log_fn cuzk_go_log_fn(void) { return (cuzk_log_fn)cuzkGoLog; }
*/
import "C"

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"unsafe"
)

// LogLevel is the level of a libcuzk log record.
type LogLevel int

const (
	LogError LogLevel = 1
	LogWarn  LogLevel = 2
	LogInfo  LogLevel = 3
	LogDebug LogLevel = 4
	LogTrace LogLevel = 5
)

func (l LogLevel) String() string {
	switch l {
	case LogError:
		return "error"
	case LogWarn:
		return "warn"
	case LogInfo:
		return "info"
	case LogDebug:
		return "debug"
	case LogTrace:
		return "trace"
	}
	return "unknown"
}

// LogFunc receives libcuzk's log records: target is the Rust module ("cuzk::engine"), message
// the text. Job records name the job, its kind, proof type, sector and request id, e.g.
// `job 7 (porep StackedDrg32GiBV1_1, sector 42, request "s-42"): done in 14.2s (10 partitions)`.
// It is called from libcuzk's own threads, concurrently: it must be safe for concurrent use
// and should not block for long (a proof stage waits for it). It may call any method of this
// package.
type LogFunc func(level LogLevel, target, message string)

var (
	logFunc atomic.Pointer[LogFunc]
	// logMu serializes SetLogFunc calls, so the library and logFunc agree on the sink.
	logMu sync.Mutex
)

// SetLogFunc routes libcuzk's log records that pass the filter (SetLogFilter; RUST_LOG at the
// first New, default "warn,cuzk=info") to fn instead of stderr; nil routes them back to stderr.
// When it returns, the previous fn is no longer called.
func SetLogFunc(fn LogFunc) error {
	logMu.Lock()
	defer logMu.Unlock()
	var cerr *C.cuzk_error
	if fn == nil {
		if st := C.cuzk_log_configure(nil, nil, nil, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		logFunc.Store(nil)
		return nil
	}
	logFunc.Store(&fn)
	if st := C.cuzk_log_configure(nil, C.cuzk_go_log_fn(), nil, &cerr); st != C.CUZK_STATUS_OK {
		logFunc.Store(nil)
		return takeError(st, cerr)
	}
	return nil
}

// SetLogFilter sets the filter of libcuzk's log output, in RUST_LOG syntax ("info",
// "cuzk=debug,warn"). It starts as RUST_LOG (default "warn,cuzk=info"), read when the first
// Engine is created. Records go to stderr, or to the SetLogFunc function.
func SetLogFilter(filter string) error {
	cs := C.CString(filter)
	defer C.free(unsafe.Pointer(cs))
	logMu.Lock()
	defer logMu.Unlock()
	// cuzk_log_configure sets the filter and the sink together: keep the current sink.
	var sink C.cuzk_log_fn
	if logFunc.Load() != nil {
		sink = C.cuzk_go_log_fn()
	}
	var cerr *C.cuzk_error
	if st := C.cuzk_log_configure(cs, sink, nil, &cerr); st != C.CUZK_STATUS_OK {
		return takeError(st, cerr)
	}
	return nil
}

// SlogFunc is a LogFunc that writes to l: error, warn, info and debug map to slog's levels,
// trace to slog.LevelDebug-4; the record carries the attribute "target". For go-log / zap,
// write a LogFunc the same way.
func SlogFunc(l *slog.Logger) LogFunc {
	return func(level LogLevel, target, message string) {
		l.Log(context.Background(), level.slog(), message, slog.String("target", target))
	}
}

func (l LogLevel) slog() slog.Level {
	switch l {
	case LogError:
		return slog.LevelError
	case LogWarn:
		return slog.LevelWarn
	case LogInfo:
		return slog.LevelInfo
	case LogDebug:
		return slog.LevelDebug
	}
	return slog.LevelDebug - 4
}
