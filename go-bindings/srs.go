package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/filecoin-project/go-state-types/abi"
)

// LoadSRS loads and keeps resident the Groth16 parameters of proof. path is the .params
// file, or "" for v28-<circuit id>.params in Config.ParamsDir. Loading a resident file
// returns at once. The duration is the decode time.
//
// A 32 GiB SRS is a 47 GB read: when ctx ends (or Close starts) first, the load stops within
// milliseconds, nothing of it stays resident, and the error matches both ctx.Err() and
// ErrCancelled.
func (e *Engine) LoadSRS(ctx context.Context, proof abi.RegisteredSealProof, path string) (time.Duration, error) {
	return e.LoadKindSRS(ctx, KindPoRep, int64(proof), path)
}

// LoadKindSRS is LoadSRS for a registered proof of any kind k (its filecoin-ffi number:
// abi.RegisteredSealProof, abi.RegisteredPoStProof or abi.RegisteredUpdateProof).
func (e *Engine) LoadKindSRS(ctx context.Context, k Kind, registeredProof int64, path string) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("cuzk: SRS load: %w: %w", err, &Error{Code: CodeCancelled, Message: "not started: its context had ended"})
	}
	var cpath *C.char
	if path != "" {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	var secs C.double
	err := e.withCancel(ctx, func(p *C.cuzk_engine, token *C.cuzk_cancel) error {
		var cerr *C.cuzk_error
		if st := C.cuzk_srs_load_cancellable(p, C.int32_t(k), C.int64_t(registeredProof), cpath, token, &secs, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	if err != nil && errors.Is(err, ErrCancelled) && ctx.Err() != nil {
		return 0, fmt.Errorf("cuzk: SRS load: %w: %w", ctx.Err(), err)
	}
	return seconds(float64(secs)), err
}

// withCancel runs fn with a native cancellation token that is triggered when ctx ends or
// Close starts, and freed once fn has returned and no trigger runs.
func (e *Engine) withCancel(ctx context.Context, fn func(p *C.cuzk_engine, token *C.cuzk_cancel) error) error {
	var token *C.cuzk_cancel
	var cerr *C.cuzk_error
	if st := C.cuzk_cancel_new(&token, &cerr); st != C.CUZK_STATUS_OK {
		return takeError(st, cerr)
	}
	if !e.track(token) { // Close has started
		C.cuzk_cancel_free(token)
		return errf(CodeShuttingDown, "engine is closing")
	}
	triggered := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		C.cuzk_cancel_trigger(token, nil)
		close(triggered)
	})
	defer func() {
		if !stop() { // the trigger started: let it finish before the token goes
			<-triggered
		}
		e.untrack(token)
		C.cuzk_cancel_free(token)
	}()
	return e.with(func(p *C.cuzk_engine) error { return fn(p, token) })
}

// track registers a token for Close to trigger; false once Close has started.
func (e *Engine) track(token *C.cuzk_cancel) bool {
	e.cancelsMu.Lock()
	defer e.cancelsMu.Unlock()
	if e.closing {
		return false
	}
	if e.cancels == nil {
		e.cancels = make(map[*C.cuzk_cancel]struct{})
	}
	e.cancels[token] = struct{}{}
	return true
}

func (e *Engine) untrack(token *C.cuzk_cancel) {
	e.cancelsMu.Lock()
	defer e.cancelsMu.Unlock()
	delete(e.cancels, token)
}

// cancelAll triggers every tracked token and refuses new ones (Close, before it waits for the
// calls in flight: a load would otherwise hold Close for its whole read).
func (e *Engine) cancelAll() {
	e.cancelsMu.Lock()
	defer e.cancelsMu.Unlock()
	e.closing = true
	for t := range e.cancels {
		C.cuzk_cancel_trigger(t, nil)
	}
}
