package cuzk

/*
#include "cuzk.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/filecoin-project/go-state-types/abi"
)

// Code is a cuzk_status code. The numbers are part of the C ABI.
type Code int32

// The status codes of include/cuzk.h.
const (
	CodeOK              Code = C.CUZK_STATUS_OK
	CodeInvalidArgument Code = C.CUZK_STATUS_INVALID_ARGUMENT
	CodeInvalidInput    Code = C.CUZK_STATUS_INVALID_INPUT
	CodeSRSNotLoaded    Code = C.CUZK_STATUS_SRS_NOT_LOADED
	CodeSRSLoad         Code = C.CUZK_STATUS_SRS_LOAD
	CodeUnknownJob      Code = C.CUZK_STATUS_UNKNOWN_JOB
	CodeCancelled       Code = C.CUZK_STATUS_CANCELLED
	CodeTimeout         Code = C.CUZK_STATUS_TIMEOUT
	CodeSynthesis       Code = C.CUZK_STATUS_SYNTHESIS
	CodeProver          Code = C.CUZK_STATUS_PROVER
	CodeVerification    Code = C.CUZK_STATUS_VERIFICATION
	CodeShuttingDown    Code = C.CUZK_STATUS_SHUTTING_DOWN
	CodeUnsupported     Code = C.CUZK_STATUS_UNSUPPORTED
	CodePanic           Code = C.CUZK_STATUS_PANIC
	CodeInternal        Code = C.CUZK_STATUS_INTERNAL
	CodeFaultySectors   Code = C.CUZK_STATUS_FAULTY_SECTORS
	CodeQueueFull       Code = C.CUZK_STATUS_QUEUE_FULL
)

// String is the library's name for the code ("SRS not loaded").
func (s Code) String() string {
	// cuzk_status_name returns a static string; nothing to free.
	return C.GoString(C.cuzk_status_name(C.int32_t(s)))
}

// Error is a failure reported by libcuzk (or by these bindings, with the same codes).
//
// Match the kind with errors.Is and the sentinels below:
//
//	if errors.Is(err, cuzk.ErrSRSNotLoaded) { ... }
type Error struct {
	Code    Code
	Message string
	// Sectors lists the faulty sectors of an ErrFaultySectors error (PoSt vanilla proofs that
	// do not verify), as filecoin-ffi's PoSt calls report them.
	Sectors []abi.SectorNumber
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
	ErrInvalidArgument = &Error{Code: CodeInvalidArgument}
	ErrInvalidInput    = &Error{Code: CodeInvalidInput}
	ErrSRSNotLoaded    = &Error{Code: CodeSRSNotLoaded}
	ErrSRSLoad         = &Error{Code: CodeSRSLoad}
	ErrUnknownJob      = &Error{Code: CodeUnknownJob}
	ErrCancelled       = &Error{Code: CodeCancelled}
	ErrTimeout         = &Error{Code: CodeTimeout}
	ErrSynthesis       = &Error{Code: CodeSynthesis}
	ErrProver          = &Error{Code: CodeProver}
	ErrVerification    = &Error{Code: CodeVerification}
	// ErrShuttingDown also matches calls on a closed Engine.
	ErrShuttingDown = &Error{Code: CodeShuttingDown}
	// ErrUnsupported also matches an ABI version mismatch found by New.
	ErrUnsupported = &Error{Code: CodeUnsupported}
	ErrPanic       = &Error{Code: CodePanic}
	ErrInternal    = &Error{Code: CodeInternal}
	// ErrFaultySectors: the error's Sectors lists them.
	ErrFaultySectors = &Error{Code: CodeFaultySectors}
	// ErrQueueFull: the engine holds as much unfinished work as its config allows; nothing was
	// accepted, retry once jobs have finished.
	ErrQueueFull = &Error{Code: CodeQueueFull}
)

// takeError converts a failed call's status and native error into a Go error and frees the
// native error. cerr may be NULL (then the message is empty). Never returns nil for a
// non-OK status.
func takeError(st C.cuzk_status, cerr *C.cuzk_error) error {
	if cerr == nil {
		return &Error{Code: Code(st)}
	}
	defer C.cuzk_error_free(cerr)
	// The message is borrowed from cerr: copy it before the deferred free.
	e := &Error{Code: Code(C.cuzk_error_code(cerr)), Message: C.GoString(C.cuzk_error_message(cerr))}
	var sectors *C.uint64_t
	var n C.size_t
	if C.cuzk_error_sectors(cerr, &sectors, &n) == C.CUZK_STATUS_OK && n > 0 {
		for _, s := range unsafe.Slice(sectors, int(n)) {
			e.Sectors = append(e.Sectors, abi.SectorNumber(s))
		}
	}
	if e.Code != Code(st) {
		// Cannot happen per the ABI; keep the returned status authoritative.
		e.Message = fmt.Sprintf("%s (error object said %v)", e.Message, e.Code)
		e.Code = Code(st)
	}
	return e
}

func errf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
