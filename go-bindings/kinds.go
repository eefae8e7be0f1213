package cuzk

/*
#include <stdlib.h>
#include <string.h>
#include "cuzk.h"
*/
import "C"

import (
	"context"
	"errors"
	"unsafe"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

// The proof kinds beside PoRep C2, with the shapes of filecoin-ffi's functions: a node swaps
// ffi.GenerateWinningPoStWithVanilla(...) for eng.GenerateWinningPoStWithVanilla(ctx, ...), and
// so on. Each kind's SRS is loaded from Config.ParamsDir on first use and stays resident.

// Kind is a proof kind (cuzk_proof_kind); LoadKindSRS takes it with that kind's registered
// proof number (abi.RegisteredSealProof, abi.RegisteredPoStProof, abi.RegisteredUpdateProof).
type Kind int32

const (
	KindPoRep       Kind = C.CUZK_KIND_POREP
	KindWinningPoSt Kind = C.CUZK_KIND_WINNING_POST
	KindWindowPoSt  Kind = C.CUZK_KIND_WINDOW_POST
	KindSnapDeals   Kind = C.CUZK_KIND_SNAP_DEALS
)

// PriorityDefault submits at the kind's default priority (WinningPoSt above WindowPoSt above
// PoRep and SnapDeals).
const PriorityDefault int32 = C.CUZK_PRIORITY_DEFAULT

// PartitionProof is one WindowPoSt partition's proof, as filecoin-ffi's PartitionProof.
type PartitionProof proof.PoStProof

// cBytesList copies byte strings into C memory (a cuzk_bytes array may not point at Go memory);
// free releases it.
func cBytesList(list [][]byte) (*C.cuzk_bytes, C.size_t, func(), error) {
	if len(list) == 0 {
		return nil, 0, func() {}, errf(CodeInvalidArgument, "no vanilla proofs given")
	}
	n := len(list)
	arr := (*[1 << 28]C.cuzk_bytes)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.cuzk_bytes{}))))[:n:n]
	var bufs []unsafe.Pointer
	free := func() {
		for _, b := range bufs {
			C.free(b)
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
	for i, b := range list {
		if len(b) == 0 {
			free()
			return nil, 0, func() {}, errf(CodeInvalidArgument, "vanilla proof %d is empty", i)
		}
		c := C.CBytes(b)
		bufs = append(bufs, c)
		arr[i] = C.cuzk_bytes{ptr: (*C.uint8_t)(c), len: C.size_t(len(b))}
	}
	return &arr[0], C.size_t(n), free, nil
}

func bytes32(name string, b []byte) ([32]byte, error) {
	var out [32]byte
	if len(b) != 32 {
		return out, errf(CodeInvalidArgument, "%s is %d bytes, not 32", name, len(b))
	}
	copy(out[:], b)
	return out, nil
}

// withKindSRS runs submit, loading the kind's SRS first when it is not resident (once more if
// it was evicted in between).
func (e *Engine) withKindSRS(ctx context.Context, k Kind, n int64, submit func() (*Job, error)) (*Job, error) {
	for attempt := 0; ; attempt++ {
		job, err := submit()
		if errors.Is(err, ErrSRSNotLoaded) && attempt == 0 {
			if _, lerr := e.LoadKindSRS(ctx, k, n, ""); lerr != nil {
				return nil, lerr
			}
			continue
		}
		return job, err
	}
}

func (e *Engine) submitPoSt(ctx context.Context, k Kind, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partition int64) (*Job, error) {
	prover, err := ProverIDFromActor(minerID)
	if err != nil {
		return nil, err
	}
	rand, err := bytes32("randomness", randomness)
	if err != nil {
		return nil, err
	}
	rand[31] &= 0x3f // filecoin-ffi hands PoSt randomness over as a field element the same way
	list, n, free, err := cBytesList(proofs)
	if err != nil {
		return nil, err
	}
	defer free()
	return e.withKindSRS(ctx, k, int64(proofType), func() (*Job, error) {
		return e.submitJob(func(p *C.cuzk_engine, id *C.uint64_t, cerr **C.cuzk_error) C.cuzk_status {
			if k == KindWinningPoSt {
				return C.cuzk_submit_winning_post(p, C.int64_t(proofType), (*C.uint8_t)(&rand[0]), (*C.uint8_t)(&prover[0]), list, n, C.int32_t(PriorityDefault), nil, id, cerr)
			}
			return C.cuzk_submit_window_post(p, C.int64_t(proofType), (*C.uint8_t)(&rand[0]), (*C.uint8_t)(&prover[0]), list, n, C.int64_t(partition), C.int32_t(PriorityDefault), nil, id, cerr)
		})
	})
}

// waitBytes waits for job (unless submitting it failed with err) and returns its proof bytes.
func waitBytes(ctx context.Context, job *Job, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	p, err := job.Wait(ctx)
	if err != nil {
		return nil, err
	}
	return p.Bytes, nil
}

// GenerateWinningPoStWithVanilla proves a WinningPoSt like filecoin-ffi's function of that
// name: proofs are the challenged sectors' vanilla proofs (GenerateSingleVanillaProof's).
// A vanilla proof that does not verify is an ErrFaultySectors error listing the sector.
func (e *Engine) GenerateWinningPoStWithVanilla(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	job, err := e.submitPoSt(ctx, KindWinningPoSt, proofType, minerID, randomness, proofs, -1)
	b, err := waitBytes(ctx, job, err)
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: b}}, nil
}

// GenerateWindowPoStWithVanilla proves every partition of a WindowPoSt like filecoin-ffi's
// function of that name (proofs in ascending sector order). Faulty sectors come back as an
// ErrFaultySectors error whose Sectors lists them.
func (e *Engine) GenerateWindowPoStWithVanilla(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	job, err := e.submitPoSt(ctx, KindWindowPoSt, proofType, minerID, randomness, proofs, -1)
	b, err := waitBytes(ctx, job, err)
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: b}}, nil
}

// GenerateSinglePartitionWindowPoStWithVanilla proves one WindowPoSt partition like
// filecoin-ffi's function of that name: proofs are that partition's sectors' vanilla proofs.
// Concatenating the partitions' ProofBytes in order gives GenerateWindowPoStWithVanilla's proof.
func (e *Engine) GenerateSinglePartitionWindowPoStWithVanilla(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (*PartitionProof, error) {
	job, err := e.submitPoSt(ctx, KindWindowPoSt, proofType, minerID, randomness, proofs, int64(partitionIndex))
	b, err := waitBytes(ctx, job, err)
	if err != nil {
		return nil, err
	}
	return &PartitionProof{PoStProof: proofType, ProofBytes: b}, nil
}

func commitments(oldSealed, newSealed, unsealed cid.Cid) (old, new, d [32]byte, err error) {
	conv := []struct {
		name string
		c    cid.Cid
		f    func(cid.Cid) ([]byte, error)
		dst  *[32]byte
	}{{"old sealed CID", oldSealed, commcid.CIDToReplicaCommitmentV1, &old}, {"new sealed CID", newSealed, commcid.CIDToReplicaCommitmentV1, &new},
		{"unsealed CID", unsealed, commcid.CIDToDataCommitmentV1, &d}}
	for _, x := range conv {
		b, cerr := x.f(x.c)
		if cerr != nil {
			return old, new, d, errf(CodeInvalidArgument, "%s %v: %v", x.name, x.c, cerr)
		}
		if *x.dst, err = bytes32(x.name, b); err != nil {
			return
		}
	}
	return
}

// GenerateUpdateProofWithVanilla proves a SnapDeals update like filecoin-ffi's
// SectorUpdate.GenerateUpdateProofWithVanilla, in its argument order (Curio's ffiselect's, ctx
// first): the old sealed (sector key), new sealed and unsealed CIDs, then vanillaProofs,
// GenerateUpdateVanillaProofs' partition proofs.
func (e *Engine) GenerateUpdateProofWithVanilla(ctx context.Context, proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, vanillaProofs [][]byte) ([]byte, error) {
	old, nw, d, err := commitments(oldSealedCID, newSealedCID, unsealedCID)
	if err != nil {
		return nil, err
	}
	list, n, free, err := cBytesList(vanillaProofs)
	if err != nil {
		return nil, err
	}
	defer free()
	job, err := e.withKindSRS(ctx, KindSnapDeals, int64(proofType), func() (*Job, error) {
		return e.submitJob(func(p *C.cuzk_engine, id *C.uint64_t, cerr **C.cuzk_error) C.cuzk_status {
			return C.cuzk_submit_snap_deals(p, C.int64_t(proofType), list, n, (*C.uint8_t)(&old[0]), (*C.uint8_t)(&nw[0]), (*C.uint8_t)(&d[0]), C.int32_t(PriorityDefault), nil, id, cerr)
		})
	})
	return waitBytes(ctx, job, err)
}

func (e *Engine) verifyPoSt(k Kind, proofs []proof.PoStProof, sectors []proof.SectorInfo, randomness abi.PoStRandomness, prover abi.ActorID) (bool, error) {
	if len(proofs) != 1 {
		return false, errf(CodeInvalidArgument, "%d proofs given; one PoSt proof version is supported", len(proofs))
	}
	if len(sectors) == 0 {
		return false, errf(CodeInvalidArgument, "no sectors given")
	}
	proverID, err := ProverIDFromActor(prover)
	if err != nil {
		return false, err
	}
	rand, err := bytes32("randomness", randomness)
	if err != nil {
		return false, err
	}
	rand[31] &= 0x3f
	cs := (*[1 << 26]C.cuzk_sector)(C.malloc(C.size_t(len(sectors)) * C.size_t(unsafe.Sizeof(C.cuzk_sector{}))))[:len(sectors):len(sectors)]
	defer C.free(unsafe.Pointer(&cs[0]))
	for i, s := range sectors {
		commR, cerr := commcid.CIDToReplicaCommitmentV1(s.SealedCID)
		if cerr != nil {
			return false, errf(CodeInvalidArgument, "sector %d SealedCID %v: %v", s.SectorNumber, s.SealedCID, cerr)
		}
		cs[i].sector_id = C.uint64_t(s.SectorNumber)
		C.memcpy(unsafe.Pointer(&cs[i].comm_r[0]), unsafe.Pointer(&commR[0]), 32)
	}
	pb := proofs[0].ProofBytes
	if len(pb) == 0 {
		return false, errf(CodeInvalidArgument, "empty proof")
	}
	var valid C.bool
	err = e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		var st C.cuzk_status
		if k == KindWinningPoSt {
			st = C.cuzk_verify_winning_post(p, C.int64_t(proofs[0].PoStProof), (*C.uint8_t)(&rand[0]), (*C.uint8_t)(&proverID[0]), &cs[0], C.size_t(len(cs)), (*C.uint8_t)(&pb[0]), C.size_t(len(pb)), &valid, &cerr)
		} else {
			st = C.cuzk_verify_window_post(p, C.int64_t(proofs[0].PoStProof), (*C.uint8_t)(&rand[0]), (*C.uint8_t)(&proverID[0]), &cs[0], C.size_t(len(cs)), (*C.uint8_t)(&pb[0]), C.size_t(len(pb)), &valid, &cerr)
		}
		if st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	return bool(valid), err
}

// VerifyWinningPoSt checks a WinningPoSt like filecoin-ffi's VerifyWinningPoSt.
func (e *Engine) VerifyWinningPoSt(info proof.WinningPoStVerifyInfo) (bool, error) {
	return e.verifyPoSt(KindWinningPoSt, info.Proofs, info.ChallengedSectors, info.Randomness, info.Prover)
}

// VerifyWindowPoSt checks a WindowPoSt like filecoin-ffi's VerifyWindowPoSt.
func (e *Engine) VerifyWindowPoSt(info proof.WindowPoStVerifyInfo) (bool, error) {
	return e.verifyPoSt(KindWindowPoSt, info.Proofs, info.ChallengedSectors, info.Randomness, info.Prover)
}

// VerifyUpdateProof checks a SnapDeals proof like filecoin-ffi's SectorUpdate.VerifyUpdateProof.
func (e *Engine) VerifyUpdateProof(info proof.ReplicaUpdateInfo) (bool, error) {
	old, nw, d, err := commitments(info.OldSealedSectorCID, info.NewSealedSectorCID, info.NewUnsealedSectorCID)
	if err != nil {
		return false, err
	}
	pb := info.Proof
	if len(pb) == 0 {
		return false, errf(CodeInvalidArgument, "empty proof")
	}
	var valid C.bool
	err = e.with(func(p *C.cuzk_engine) error {
		var cerr *C.cuzk_error
		st := C.cuzk_verify_snap_deals(p, C.int64_t(info.UpdateProofType), (*C.uint8_t)(&old[0]), (*C.uint8_t)(&nw[0]), (*C.uint8_t)(&d[0]), (*C.uint8_t)(&pb[0]), C.size_t(len(pb)), &valid, &cerr)
		if st != C.CUZK_STATUS_OK {
			return takeError(st, cerr)
		}
		return nil
	})
	return bool(valid), err
}
