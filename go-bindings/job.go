package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/filecoin-project/go-address"
	"github.com/filecoin-project/go-state-types/abi"
)

// JobState is a job's state (cuzk_job_state).
type JobState int32

const (
	// JobUnknown: the call failed before learning the state (unknown job, closed engine).
	JobUnknown   JobState = -1
	JobQueued    JobState = C.CUZK_JOB_STATE_QUEUED
	JobRunning   JobState = C.CUZK_JOB_STATE_RUNNING
	JobDone      JobState = C.CUZK_JOB_STATE_DONE
	JobFailed    JobState = C.CUZK_JOB_STATE_FAILED
	JobCancelled JobState = C.CUZK_JOB_STATE_CANCELLED
)

func (s JobState) String() string {
	switch s {
	case JobUnknown:
		return "unknown"
	case JobQueued:
		return "queued"
	case JobRunning:
		return "running"
	case JobDone:
		return "done"
	case JobFailed:
		return "failed"
	case JobCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("JobState(%d)", int32(s))
}

// Final reports whether the job has ended.
func (s JobState) Final() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// ProverIDFromActor derives the 32-byte prover id of a miner actor exactly as filecoin-ffi's
// toProverID does: the payload of the ID address f0<id> (the id as an unsigned LEB128
// varint), zero-padded to 32 bytes. For example actor 1000 gives e8 07 00 ... 00.
func ProverIDFromActor(id abi.ActorID) ([32]byte, error) {
	var out [32]byte
	a, err := address.NewIDAddress(uint64(id))
	if err != nil {
		return out, errf(CodeInvalidArgument, "actor id %d: %v", uint64(id), err)
	}
	copy(out[:], a.Payload())
	return out, nil
}

// proverID picks the explicit prover id when set, else derives it from the miner actor id.
func proverID(miner abi.ActorID, explicit [32]byte) ([32]byte, error) {
	if explicit != ([32]byte{}) {
		if miner != 0 {
			derived, err := ProverIDFromActor(miner)
			if err != nil {
				return explicit, err
			}
			if derived != explicit {
				return explicit, errf(CodeInvalidArgument,
					"ProverID %x does not belong to miner f0%d (expected %x); set only one of them", explicit, uint64(miner), derived)
			}
		}
		return explicit, nil
	}
	return ProverIDFromActor(miner)
}

// C2Request is one PoRep C2 job.
type C2Request struct {
	// C1 is the output of filecoin-ffi's SealCommitPhase1, unchanged (JSON bytes).
	C1     []byte
	Sector abi.SectorNumber
	// The prover: ProverID when not all zero, else derived from Miner the way filecoin-ffi
	// does (ProverIDFromActor). Setting both is allowed only when they agree.
	Miner    abi.ActorID
	ProverID [32]byte
	// Priority: higher runs first.
	Priority int32
	// RequestID, if not empty, is an idempotency key: submitting the same key with the same
	// C1, sector and prover again returns the same job while the engine remembers it
	// (Config.JobTTL after it ends); the same key with other content is ErrInvalidArgument; a
	// job that failed or was cancelled releases its key, so a retry runs anew. No NUL bytes.
	RequestID string
}

// Job is a submitted C2 job.
type Job struct {
	e  *Engine
	id uint64
}

// ID is the engine's job id.
func (j *Job) ID() uint64 { return j.id }

// SubmitC2 validates and queues a C2 job. Errors in the request (unparseable C1: ErrInvalidInput,
// no SRS loaded for its proof type: ErrSRSNotLoaded) are returned here. ctx only guards the
// submission itself; pass a context to Job.Wait to bound the proving.
func (e *Engine) SubmitC2(ctx context.Context, req C2Request) (*Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.C1) == 0 {
		return nil, errf(CodeInvalidArgument, "C2Request.C1 is empty")
	}
	prover, err := proverID(req.Miner, req.ProverID)
	if err != nil {
		return nil, err
	}
	if strings.IndexByte(req.RequestID, 0) >= 0 {
		// C.CString would cut the key at the NUL and make two keys one.
		return nil, errf(CodeInvalidArgument, "C2Request.RequestID contains a NUL byte")
	}
	var crid *C.char
	if req.RequestID != "" {
		crid = C.CString(req.RequestID)
		defer C.free(unsafe.Pointer(crid))
	}
	job, err := e.submitJob(func(p *C.cuzk_engine, id *C.uint64_t, cerr **C.cuzk_error) C.cuzk_status {
		// C1 and prover are Go memory without Go pointers, borrowed for the call only.
		return C.cuzk_submit_porep_c2(p, (*C.uint8_t)(&req.C1[0]), C.size_t(len(req.C1)),
			C.uint64_t(req.Sector), (*C.uint8_t)(&prover[0]), C.int32_t(req.Priority), crid, id, cerr)
	})
	runtime.KeepAlive(req.C1)
	return job, err
}

// submitJob makes one cuzk_submit_* call (submit passes id and cerr on as its out-params) and
// returns the job it queued, or the call's error.
func (e *Engine) submitJob(submit func(p *C.cuzk_engine, id *C.uint64_t, cerr **C.cuzk_error) C.cuzk_status) (*Job, error) {
	var id C.uint64_t
	err := e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		if st := submit(p, &id, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Job{e: e, id: uint64(id)}, nil
}

// result turns a poll/wait outcome into (state, proof, error); it owns and frees cproof.
func result(st C.cuzk_status, state C.int32_t, cproof *C.cuzk_proof, cerr *C.cuzk_error) (JobState, *Proof, error) {
	if st != C.CUZK_STATUS_OK {
		return JobState(state), nil, takeError(st, cerr)
	}
	if cproof == nil {
		return JobState(state), nil, nil
	}
	defer C.cuzk_proof_free(cproof)
	p, err := copyProof(cproof)
	return JobState(state), p, err
}

// Poll returns the job's state without blocking; once it is JobDone, also its proof. A failed
// or cancelled job returns JobFailed or JobCancelled with its own error (errors.Is(err,
// ErrCancelled), ...); other errors come with JobUnknown.
func (j *Job) Poll() (JobState, *Proof, error) {
	var (
		state = JobUnknown
		proof *Proof
		rerr  error
	)
	err := j.e.with(func(p *C.cuzk_engine) error {
		cstate := C.int32_t(JobUnknown) // written by cuzk only when the job is known
		var cproof *C.cuzk_proof
		var cerr *C.cuzk_error
		st := C.cuzk_job_poll(p, C.uint64_t(j.id), &cstate, &cproof, &cerr)
		state, proof, rerr = result(st, cstate, cproof, cerr)
		return rerr
	})
	return state, proof, err
}

// waitStep is the longest single blocking native wait; ctx is checked between steps.
const waitStep = 200 * time.Millisecond

// Wait blocks until the job ends and returns its proof. When ctx ends first, the job is
// cancelled and the error matches both ctx.Err() and ErrCancelled.
func (j *Job) Wait(ctx context.Context) (*Proof, error) {
	for {
		if ctx.Err() != nil {
			return j.abandon(ctx)
		}
		step := waitStep
		if d, ok := ctx.Deadline(); ok {
			if left := time.Until(d); left < step {
				step = max(left, time.Millisecond)
			}
		}
		var proof *Proof
		err := j.e.with(func(p *C.cuzk_engine) error {
			cstate := C.int32_t(JobUnknown)
			var cproof *C.cuzk_proof
			var cerr *C.cuzk_error
			st := C.cuzk_job_wait(p, C.uint64_t(j.id), C.int64_t(step.Milliseconds()), &cstate, &cproof, &cerr)
			var rerr error
			_, proof, rerr = result(st, cstate, cproof, cerr)
			return rerr
		})
		if errors.Is(err, ErrTimeout) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if proof == nil {
			return nil, errf(CodeInternal, "job %d: wait returned without a proof", j.id)
		}
		return proof, nil
	}
}

// abandon cancels the job because ctx ended. A job that had already ended returns its own
// outcome (a proof that finished in the race is not thrown away).
func (j *Job) abandon(ctx context.Context) (*Proof, error) {
	cancelled, err := j.Cancel()
	if err != nil {
		return nil, fmt.Errorf("cuzk: job %d: %w (and cancelling it failed: %w)", j.id, ctx.Err(), err)
	}
	if !cancelled {
		if state, proof, err := j.Poll(); state == JobDone || err != nil {
			return proof, err
		}
	}
	return nil, fmt.Errorf("cuzk: job %d: %w: %w", j.id, ctx.Err(),
		&Error{Code: CodeCancelled, Message: "cancelled because its context ended"})
}

// Cancel cancels the job: queued work is dropped at once, running work at its next stage
// boundary. It reports whether this call cancelled it (false: it had already ended).
func (j *Job) Cancel() (bool, error) {
	var c C.bool
	err := j.e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		if st := C.cuzk_job_cancel(p, C.uint64_t(j.id), &c, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	return bool(c), err
}

// Proof is a finished job's result, copied into Go memory.
type Proof struct {
	// Bytes is the proof as filecoin-ffi's SealCommitPhase2 returns it (192 bytes per partition).
	Bytes   []byte
	Timings Timings
}

// Timings are the job's stage wall times and facts (from cuzk_proof_timings_json).
type Timings struct {
	Queue      time.Duration // submit → first synthesis starts
	SRS        time.Duration // SRS lookup at submit
	Synthesis  time.Duration // summed over partitions
	ProveQueue time.Duration // synthesized partitions waiting for the prover, summed
	Prove      time.Duration // Groth16 proving, summed over partitions
	Verify     time.Duration // verification of the final proof
	Total      time.Duration // submit → result ready
	// Phases are the backend's own timers, by name.
	Phases     map[string]time.Duration
	Backend    string
	Partitions int
	Verified   bool
	ProofBytes int
}

type timingsJSON struct {
	Queue      float64            `json:"queue_s"`
	SRS        float64            `json:"srs_s"`
	Synthesis  float64            `json:"synthesis_s"`
	ProveQueue float64            `json:"prove_queue_s"`
	Prove      float64            `json:"prove_s"`
	Verify     float64            `json:"verify_s"`
	Total      float64            `json:"total_s"`
	Phases     map[string]float64 `json:"phases_s"`
	Backend    string             `json:"backend"`
	Partitions int                `json:"partitions"`
	Verified   bool               `json:"verified"`
	ProofBytes int                `json:"proof_bytes"`
}

func parseTimings(js []byte) (Timings, error) {
	var t timingsJSON
	if err := json.Unmarshal(js, &t); err != nil {
		return Timings{}, errf(CodeInternal, "parsing timings JSON %q: %v", js, err)
	}
	out := Timings{
		Queue: seconds(t.Queue), SRS: seconds(t.SRS), Synthesis: seconds(t.Synthesis),
		ProveQueue: seconds(t.ProveQueue), Prove: seconds(t.Prove), Verify: seconds(t.Verify),
		Total: seconds(t.Total), Phases: make(map[string]time.Duration, len(t.Phases)),
		Backend: t.Backend, Partitions: t.Partitions, Verified: t.Verified, ProofBytes: t.ProofBytes,
	}
	for k, v := range t.Phases {
		out.Phases[k] = seconds(v)
	}
	return out, nil
}

// copyProof copies a native proof's bytes and timings into Go memory (cproof stays owned by
// the caller).
func copyProof(cproof *C.cuzk_proof) (*Proof, error) {
	var ptr *C.uint8_t
	var n C.size_t
	var cerr *C.cuzk_error
	if st := C.cuzk_proof_bytes(cproof, &ptr, &n, &cerr); st != C.CUZK_STATUS_OK {
		return nil, takeError(st, cerr)
	}
	// Borrowed from cproof: copy before it is freed.
	b := C.GoBytes(unsafe.Pointer(ptr), C.int(n))
	var js *C.char
	if st := C.cuzk_proof_timings_json(cproof, &js, &cerr); st != C.CUZK_STATUS_OK {
		return nil, takeError(st, cerr)
	}
	t, err := parseTimings([]byte(takeString(js)))
	if err != nil {
		return nil, err
	}
	return &Proof{Bytes: b, Timings: t}, nil
}
