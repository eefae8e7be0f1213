package cuzk

/*
#include "cuzk.h"
*/
import "C"

import "fmt"

// Status is a cuzk_status code. The numbers are part of the C ABI.
type Status int32

// The status codes of include/cuzk.h.
const (
	StatusOK              Status = C.CUZK_STATUS_OK
	StatusInvalidArgument Status = C.CUZK_STATUS_INVALID_ARGUMENT
	StatusInvalidInput    Status = C.CUZK_STATUS_INVALID_INPUT
	StatusSRSNotLoaded    Status = C.CUZK_STATUS_SRS_NOT_LOADED
	StatusSRSLoad         Status = C.CUZK_STATUS_SRS_LOAD
	StatusUnknownJob      Status = C.CUZK_STATUS_UNKNOWN_JOB
	StatusCancelled       Status = C.CUZK_STATUS_CANCELLED
	StatusTimeout         Status = C.CUZK_STATUS_TIMEOUT
	StatusSynthesis       Status = C.CUZK_STATUS_SYNTHESIS
	StatusProver          Status = C.CUZK_STATUS_PROVER
	StatusVerification    Status = C.CUZK_STATUS_VERIFICATION
	StatusShuttingDown    Status = C.CUZK_STATUS_SHUTTING_DOWN
	StatusUnsupported     Status = C.CUZK_STATUS_UNSUPPORTED
	StatusPanic           Status = C.CUZK_STATUS_PANIC
	StatusInternal        Status = C.CUZK_STATUS_INTERNAL
)

// String is the library's name for the code ("SRS not loaded").
func (s Status) String() string {
	// cuzk_status_name returns a static string; nothing to free.
	return C.GoString(C.cuzk_status_name(C.int32_t(s)))
}

// Error is a failure reported by libcuzk (or by these bindings, with the same codes).
//
// Match the kind with errors.Is and the sentinels below:
//
//	if errors.Is(err, cuzk.ErrSRSNotLoaded) { ... }
type Error struct {
	Code    Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "cuzk: " + e.Code.String()
	}
	return "cuzk: " + e.Code.String() + ": " + e.Message
}

// Is reports whether target is an *Error with the same code and, unless target's message
// is empty (as in the sentinels), the same message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels, one per cuzk_status (except OK), for errors.Is.
var (
	ErrInvalidArgument = &Error{Code: StatusInvalidArgument}
	ErrInvalidInput    = &Error{Code: StatusInvalidInput}
	ErrSRSNotLoaded    = &Error{Code: StatusSRSNotLoaded}
	ErrSRSLoad         = &Error{Code: StatusSRSLoad}
	ErrUnknownJob      = &Error{Code: StatusUnknownJob}
	ErrCancelled       = &Error{Code: StatusCancelled}
	ErrTimeout         = &Error{Code: StatusTimeout}
	ErrSynthesis       = &Error{Code: StatusSynthesis}
	ErrProver          = &Error{Code: StatusProver}
	ErrVerification    = &Error{Code: StatusVerification}
	// ErrShuttingDown also matches calls on a closed Engine.
	ErrShuttingDown = &Error{Code: StatusShuttingDown}
	// ErrUnsupported also matches an ABI version mismatch found by New.
	ErrUnsupported = &Error{Code: StatusUnsupported}
	ErrPanic       = &Error{Code: StatusPanic}
	ErrInternal    = &Error{Code: StatusInternal}
)

// takeError converts a failed call's status and native error into a Go error and frees the
// native error. cerr may be NULL (then the message is empty). Never returns nil for a
// non-OK status.
func takeError(st C.cuzk_status, cerr *C.cuzk_error) error {
	if cerr == nil {
		return &Error{Code: Status(st)}
	}
	defer C.cuzk_error_free(cerr)
	// The message is borrowed from cerr: copy it before the deferred free.
	e := &Error{Code: Status(C.cuzk_error_code(cerr)), Message: C.GoString(C.cuzk_error_message(cerr))}
	if e.Code != Status(st) {
		// Cannot happen per the ABI; keep the returned status authoritative.
		e.Message = fmt.Sprintf("%s (error object said %v)", e.Message, e.Code)
		e.Code = Status(st)
	}
	return e
}

func errf(code Status, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
