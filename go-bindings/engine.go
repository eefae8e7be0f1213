// Package cuzk wraps libcuzk, a PoRep C2 (Groth16 over BLS12-381) proving library, for Go.
//
// One Engine holds worker threads, resident SRSes (Groth16 parameters) and a job table.
// Load the SRS of a proof type once, then submit C2 jobs (the C1 output of filecoin-ffi's
// SealCommitPhase1) and wait for their proofs:
//
//	eng, err := cuzk.New(cuzk.Config{ParamsDir: "/var/tmp/filecoin-proof-parameters"})
//	defer eng.Close()
//	_, err = eng.LoadSRS(ctx, abi.RegisteredSealProof_StackedDrg32GiBV1_1, "")
//	job, err := eng.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: 7, Miner: 1000})
//	proof, err := job.Wait(ctx)
//
// or, as a one-line replacement for filecoin-ffi's call (loads the SRS on first use):
//
//	proof, err := eng.SealCommitPhase2(ctx, c1, sectorNum, minerID)
//
// Every method is safe for concurrent use. Close the Engine when done: Close cancels jobs
// in flight (or finishes them, with Config.DrainOnClose) and frees native memory.
package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/filecoin-project/go-state-types/abi"
)

// bindingsABIVersion is the C ABI these bindings are written against.
const bindingsABIVersion = 1

// Config configures an Engine. The zero value selects every default.
type Config struct {
	// Backend: "auto" (default: CUDA when available, else CPU), "cpu" or "cuda".
	Backend string
	// Devices: the CUDA device ordinals to prove on (nil: every device).
	Devices []int
	// GPULanes: partitions each CUDA device proves at once (1 or 2; 0 = automatic: 2).
	GPULanes int
	// CPULanes: partitions the CPU backend proves at once (0 = automatic: 1); with 2 a short
	// proof (WinningPoSt) starts beside a long C2 partition instead of waiting for it.
	CPULanes int
	// SynthesisWorkers: threads synthesizing partitions concurrently; 0 = automatic.
	SynthesisWorkers int
	// ProveQueueDepth: synthesized partitions allowed to wait for the prover; 0 = default (1).
	ProveQueueDepth int
	// MemoryBudgetMiB: memory partitions may hold from synthesis until their buffers are
	// freed; 0 = automatic (90 % of the memory available at start, less resident SRSes).
	MemoryBudgetMiB uint64
	// SkipVerify turns off verifying each proof before returning it (verified by default).
	SkipVerify bool
	// ParamsDir: where LoadSRS with an empty path looks for v28-*.params, and VerifySeal for
	// .vk files. Empty: FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters.
	ParamsDir string
	// SRSValidation: "none", "on_curve" (default) or "full".
	SRSValidation string
	// SRSCacheDir: directory of the decoded-SRS cache ("" = off); see the README.
	SRSCacheDir string
	// JobTTL: how long a finished job's result stays available; 0 = default (1 hour).
	// Rounded up to whole seconds.
	JobTTL time.Duration
	// DrainOnClose: Close finishes jobs in flight instead of cancelling them.
	DrainOnClose bool
	// FullSynthesis turns off recording each proof type's circuit once and synthesizing only
	// witnesses (on by default; see the README, "Recorded circuits").
	FullSynthesis bool
	// MaxQueuedJobs: jobs accepted and not yet finished beyond which a submit fails with
	// ErrQueueFull (nothing accepted is lost); 0 = default (1000).
	MaxQueuedJobs uint64
	// MaxQueuedInputMiB: MiB of those jobs' inputs (C1 JSON, vanilla proofs) beyond which a
	// submit fails with ErrQueueFull; 0 = default (4096).
	MaxQueuedInputMiB uint64
	// VRAMBudgetMiB: MiB of each CUDA device's memory the backend may use; 0 = automatic (what
	// is free on the device at start, less 2 %). A circuit that does not fit is proved on the CPU.
	VRAMBudgetMiB uint64
}

// configJSON is the JSON object cuzk_engine_new takes; omitted keys keep their defaults.
type configJSON struct {
	Backend          string `json:"backend,omitempty"`
	Devices          []int  `json:"devices,omitempty"`
	GPULanes         int    `json:"gpu_lanes,omitempty"`
	CPULanes         int    `json:"cpu_lanes,omitempty"`
	SynthesisWorkers int    `json:"synthesis_workers,omitempty"`
	ProveQueueDepth  int    `json:"prove_queue_depth,omitempty"`
	MemoryBudgetMiB  uint64 `json:"memory_budget_mib,omitempty"`
	Verify           *bool  `json:"verify,omitempty"`
	ParamsDir        string `json:"params_dir,omitempty"`
	SRSValidation    string `json:"srs_validation,omitempty"`
	SRSCacheDir      string `json:"srs_cache_dir,omitempty"`
	JobTTLSecs       uint64 `json:"job_ttl_secs,omitempty"`
	DrainOnFree      bool   `json:"drain_on_free,omitempty"`
	RecordCircuits   *bool  `json:"record_circuits,omitempty"`
	MaxQueuedJobs    uint64 `json:"max_queued_jobs,omitempty"`
	MaxQueuedInput   uint64 `json:"max_queued_input_mib,omitempty"`
	VRAMBudgetMiB    uint64 `json:"vram_budget_mib,omitempty"`
}

func (c Config) marshal() ([]byte, error) {
	if c.SynthesisWorkers < 0 || c.ProveQueueDepth < 0 || c.JobTTL < 0 || c.GPULanes < 0 || c.CPULanes < 0 {
		return nil, errf(CodeInvalidArgument, "config: negative SynthesisWorkers, ProveQueueDepth, JobTTL, GPULanes or CPULanes")
	}
	j := configJSON{
		Backend:          c.Backend,
		Devices:          c.Devices,
		GPULanes:         c.GPULanes,
		CPULanes:         c.CPULanes,
		SynthesisWorkers: c.SynthesisWorkers,
		ProveQueueDepth:  c.ProveQueueDepth,
		MemoryBudgetMiB:  c.MemoryBudgetMiB,
		ParamsDir:        c.ParamsDir,
		SRSValidation:    c.SRSValidation,
		SRSCacheDir:      c.SRSCacheDir,
		JobTTLSecs:       uint64((c.JobTTL + time.Second - 1) / time.Second),
		DrainOnFree:      c.DrainOnClose,
		MaxQueuedJobs:    c.MaxQueuedJobs,
		MaxQueuedInput:   c.MaxQueuedInputMiB,
		VRAMBudgetMiB:    c.VRAMBudgetMiB,
	}
	if c.SkipVerify {
		f := false
		j.Verify = &f
	}
	if c.FullSynthesis {
		f := false
		j.RecordCircuits = &f
	}
	return json.Marshal(j)
}

// Engine is a libcuzk proving engine. Create it with New; Close it when done.
type Engine struct {
	// mu guards ptr: every native call holds it for reading, Close for writing, so the
	// engine is never freed while a call uses it (cuzk_engine_free requires that).
	mu  sync.RWMutex
	ptr *C.cuzk_engine

	// cancelsMu guards the cancellation tokens of calls in flight (SRS loads) and closing,
	// set when Close starts: Close triggers them so that it does not wait out a load.
	cancelsMu sync.Mutex
	cancels   map[*C.cuzk_cancel]struct{}
	closing   bool
}

// liveEngines counts native engines not yet freed (for tests of Close and the finalizer).
var liveEngines atomic.Int64

// checkABI compares the library's ABI version with the header's and these bindings'.
func checkABI(lib, header uint32) error {
	if header != bindingsABIVersion {
		return errf(CodeUnsupported,
			"cuzk.h declares ABI version %d but these Go bindings are written for version %d", header, bindingsABIVersion)
	}
	if lib != header {
		return errf(CodeUnsupported,
			"libcuzk has ABI version %d but was compiled against cuzk.h ABI version %d: rebuild the Go program against the installed header",
			lib, header)
	}
	return nil
}

// ABIVersion is the ABI version of the linked libcuzk.
func ABIVersion() uint32 { return uint32(C.cuzk_abi_version()) }

// Version is the version of the linked libcuzk ("0.1.0").
func Version() string { return C.GoString(C.cuzk_version()) }

// New checks the library's ABI version and starts an engine.
func New(cfg Config) (*Engine, error) {
	if err := checkABI(ABIVersion(), uint32(C.CUZK_ABI_VERSION)); err != nil {
		return nil, err
	}
	js, err := cfg.marshal()
	if err != nil {
		return nil, err
	}
	cjs := C.CString(string(js))
	defer C.free(unsafe.Pointer(cjs))
	var ptr *C.cuzk_engine
	var cerr *C.cuzk_error
	if st := C.cuzk_engine_new(cjs, &ptr, &cerr); st != C.CUZK_STATUS_OK {
		return nil, takeError(st, cerr)
	}
	liveEngines.Add(1)
	e := &Engine{ptr: ptr}
	// A safety net only: Close is the contract. Closing joins native threads, which can take
	// as long as the partition being proved, so it runs off the finalizer goroutine.
	runtime.SetFinalizer(e, func(e *Engine) { go e.Close() })
	return e, nil
}

// Close stops the engine: jobs in flight are cancelled (finished with DrainOnClose), worker
// threads are joined and native memory is freed. Calls on the Engine and its Jobs made once
// Close has started (Job.Wait included) return ErrShuttingDown without waiting for it.
// Proofs already returned stay valid. Close is idempotent.
//
// Close returns when the native threads have stopped: cancelled work stops at its next
// stage boundary, so with the CPU backend Close can take as long as the partition being
// proved at that moment.
func (e *Engine) Close() error {
	e.cancelAll()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ptr == nil {
		return nil
	}
	C.cuzk_engine_free(e.ptr)
	e.ptr = nil
	liveEngines.Add(-1)
	runtime.SetFinalizer(e, nil)
	return nil
}

// with runs fn on the live native engine, keeping it alive and un-freed for the call.
func (e *Engine) with(fn func(p *C.cuzk_engine) error) error {
	// Close is the only writer. While it waits for calls in flight (at most one wait step)
	// and frees the engine (joining its threads), new calls fail at once instead of blocking.
	if !e.mu.TryRLock() {
		return errf(CodeShuttingDown, "engine is closing")
	}
	defer e.mu.RUnlock()
	if e.ptr == nil {
		return errf(CodeShuttingDown, "engine is closed")
	}
	err := fn(e.ptr)
	runtime.KeepAlive(e)
	return err
}

// takeString copies and frees a string returned by cuzk.
func takeString(s *C.char) string {
	defer C.cuzk_string_free(s)
	return C.GoString(s)
}

// StatusJSON is the engine state as the library writes it (backend, job counts, resident
// SRSes, ...); Status is the same, typed.
func (e *Engine) StatusJSON() (json.RawMessage, error) {
	var out string
	err := e.with(func(p *C.cuzk_engine) error {
		var s *C.char
		var cerr *C.cuzk_error
		if st := C.cuzk_engine_status_json(p, &s, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		out = takeString(s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// Metrics is the engine's metrics in the Prometheus text exposition format.
func (e *Engine) Metrics() (string, error) {
	var out string
	err := e.with(func(p *C.cuzk_engine) error {
		var s *C.char
		var cerr *C.cuzk_error
		if st := C.cuzk_engine_metrics(p, &s, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		out = takeString(s)
		return nil
	})
	return out, err
}

// EvictSRS drops the SRS of proof (running jobs keep their reference). It reports whether
// one was resident.
func (e *Engine) EvictSRS(proof abi.RegisteredSealProof) (bool, error) {
	var was C.bool
	err := e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		if st := C.cuzk_srs_evict(p, C.int64_t(proof), &was, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	return bool(was), err
}

// SRSStatus reports whether the SRS of proof is resident and how many bytes its decoded
// points occupy.
func (e *Engine) SRSStatus(proof abi.RegisteredSealProof) (loaded bool, residentBytes uint64, err error) {
	var l C.bool
	var n C.uint64_t
	err = e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		if st := C.cuzk_srs_status(p, C.int64_t(proof), &l, &n, &cerr); st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	return bool(l), uint64(n), err
}

// SealStatement is what VerifySealStatement checks: the public inputs of a PoRep as raw
// bytes, and its proof. (VerifySeal takes go-state-types' proof.SealVerifyInfo instead.)
type SealStatement struct {
	SealProof abi.RegisteredSealProof
	Sector    abi.SectorNumber
	// The prover: ProverID when not all zero, else derived from Miner (see ProverIDFromActor).
	Miner    abi.ActorID
	ProverID [32]byte
	CommR    [32]byte // sealed sector commitment (raw bytes, not a CID)
	CommD    [32]byte // unsealed sector commitment (raw bytes, not a CID)
	Ticket   [32]byte // seal (ticket) randomness
	Seed     [32]byte // interactive (seed) randomness
	Proof    []byte
}

// VerifySealStatement checks a seal proof like filecoin-ffi's VerifySeal, using the resident
// SRS of the proof type or else the .vk file in Config.ParamsDir. It returns false for a
// well-formed proof that does not verify, and an error for malformed input.
func (e *Engine) VerifySealStatement(info SealStatement) (bool, error) {
	if len(info.Proof) == 0 {
		return false, errf(CodeInvalidArgument, "empty proof")
	}
	prover, err := proverID(info.Miner, info.ProverID)
	if err != nil {
		return false, err
	}
	var valid C.bool
	err = e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		// Go memory without Go pointers, borrowed for the call only: allowed by cgo's rules.
		st := C.cuzk_verify_seal(p, C.int64_t(info.SealProof),
			(*C.uint8_t)(&info.CommR[0]), (*C.uint8_t)(&info.CommD[0]), (*C.uint8_t)(&prover[0]),
			C.uint64_t(info.Sector), (*C.uint8_t)(&info.Ticket[0]), (*C.uint8_t)(&info.Seed[0]),
			(*C.uint8_t)(&info.Proof[0]), C.size_t(len(info.Proof)), &valid, &cerr)
		if st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	runtime.KeepAlive(info.Proof)
	return bool(valid), err
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}
