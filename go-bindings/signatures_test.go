package cuzk_test

import (
	"context"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

// The drop-in promise, checked by the compiler: each method that stands in for a filecoin-ffi or
// Curio ffiselect call is assigned to a variable of the upstream function's type, copied here
// from upstream's declarations (filecoin-ffi proofs.go, distributed.go, sector_update.go;
// curio lib/ffiselect/ffiselect.go, struct FFISelect). A reordered argument, a changed type or
// result breaks the build of this test, not a node's call site.
//
// The one deliberate difference: filecoin-ffi's PartitionProof is a type of package ffi, which
// this module cannot import (it needs filecoin-ffi's Rust library). cuzk.PartitionProof is the
// same declaration (type PartitionProof proof.PoStProof), so callers read the same fields and
// convert with (*ffi.PartitionProof)(pp) at no cost; the last check below pins that.
type (
	// ffiselect: proving calls take ctx first.
	ffiselectSealCommitPhase2 = func(ctx context.Context, phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error)

	ffiselectGenerateWinningPoStWithVanilla = func(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID,
		randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error)

	ffiselectGenerateSinglePartitionWindowPoStWithVanilla = func(ctx context.Context, proofType abi.RegisteredPoStProof,
		minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (*cuzk.PartitionProof, error)

	ffiselectGenerateUpdateProofWithVanilla = func(ctx context.Context, proofType abi.RegisteredUpdateProof,
		key, sealed, unsealed cid.Cid, vproofs [][]byte) ([]byte, error)

	// filecoin-ffi's GenerateWindowPoStWithVanilla (ffiselect has none), with ctx first as the
	// ffiselect calls have it.
	ffiGenerateWindowPoStWithVanilla = func(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID,
		randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error)

	// filecoin-ffi's verifiers: no ctx (they do not wait for a queue).
	ffiVerifySeal         = func(info proof.SealVerifyInfo) (bool, error)
	ffiVerifyWinningPoSt  = func(info proof.WinningPoStVerifyInfo) (bool, error)
	ffiVerifyWindowPoSt   = func(info proof.WindowPoStVerifyInfo) (bool, error)
	ffiVerifyUpdateProof  = func(info proof.ReplicaUpdateInfo) (bool, error)
	ffiPartitionProofBase = proof.PoStProof
)

func TestDropInSignaturesMatchUpstream(t *testing.T) {
	var eng *cuzk.Engine // method values of a nil engine: only their types matter here
	var (
		_ ffiselectSealCommitPhase2                             = eng.SealCommitPhase2
		_ ffiselectGenerateWinningPoStWithVanilla               = eng.GenerateWinningPoStWithVanilla
		_ ffiselectGenerateSinglePartitionWindowPoStWithVanilla = eng.GenerateSinglePartitionWindowPoStWithVanilla
		_ ffiselectGenerateUpdateProofWithVanilla               = eng.GenerateUpdateProofWithVanilla
		_ ffiGenerateWindowPoStWithVanilla                      = eng.GenerateWindowPoStWithVanilla
		_ ffiVerifySeal                                         = eng.VerifySeal
		_ ffiVerifyWinningPoSt                                  = eng.VerifyWinningPoSt
		_ ffiVerifyWindowPoSt                                   = eng.VerifyWindowPoSt
		_ ffiVerifyUpdateProof                                  = eng.VerifyUpdateProof
	)
	// PartitionProof has proof.PoStProof's underlying type (as ffi.PartitionProof does): the
	// conversion compiles only then, and the fields are the ones callers read.
	pp := &cuzk.PartitionProof{PoStProof: abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, ProofBytes: []byte{1}}
	base := (*ffiPartitionProofBase)(pp)
	if base.PoStProof != pp.PoStProof || len(base.ProofBytes) != 1 {
		t.Fatal("PartitionProof does not share proof.PoStProof's layout")
	}
}
