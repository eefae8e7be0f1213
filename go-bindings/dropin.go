package cuzk

import (
	"context"
	"errors"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
)

// The calls here have the shapes of filecoin-ffi's, so that swapping a node's prover is one
// line: ffi.SealCommitPhase2(c1, n, miner) becomes eng.SealCommitPhase2(ctx, c1, n, miner),
// ffi.VerifySeal(info) becomes eng.VerifySeal(info).

// SealCommitPhase2 proves a PoRep C2 like filecoin-ffi's SealCommitPhase2: c1 is
// SealCommitPhase1's output, the prover id is derived from miner as filecoin-ffi does, and the
// result is the same proof bytes. The SRS of c1's proof type is loaded from Config.ParamsDir
// on first use and stays resident. Cancelling ctx cancels the job.
func (e *Engine) SealCommitPhase2(ctx context.Context, c1 []byte, sector abi.SectorNumber, miner abi.ActorID) ([]byte, error) {
	sp, err := SealProofOfC1(c1)
	if err != nil {
		return nil, err
	}
	req := C2Request{C1: c1, Sector: sector, Miner: miner}
	for attempt := 0; ; attempt++ {
		if err := e.ensureSRS(ctx, sp); err != nil {
			return nil, err
		}
		job, err := e.SubmitC2(ctx, req)
		// Evicted between the check and the submission: load it again, once.
		if errors.Is(err, ErrSRSNotLoaded) && attempt == 0 {
			continue
		}
		return waitBytes(ctx, job, err)
	}
}

// ensureSRS loads the SRS of sp from Config.ParamsDir unless one (from any path) is resident;
// ctx's end stops the load. Concurrent first uses decode the file once: the library
// serializes loads and the second finds it resident.
func (e *Engine) ensureSRS(ctx context.Context, sp abi.RegisteredSealProof) error {
	loaded, _, err := e.SRSStatus(sp)
	if err != nil || loaded {
		return err
	}
	_, err = e.LoadSRS(ctx, sp, "")
	return err
}

// VerifySeal checks a seal proof like filecoin-ffi's VerifySeal, taking the same
// go-state-types proof.SealVerifyInfo (the prover id derived from SectorID.Miner, CommR and
// CommD from the sealed and unsealed CIDs). DealIDs are not part of the proof's statement
// and are ignored, as upstream does. It returns false for a well-formed proof that does not
// verify, and an error for malformed input (a CID of the wrong kind, randomness that is not
// 32 bytes).
func (e *Engine) VerifySeal(info proof.SealVerifyInfo) (bool, error) {
	st, err := statementOf(info)
	if err != nil {
		return false, err
	}
	return e.VerifySealStatement(st)
}

// statementOf converts go-state-types' SealVerifyInfo to the raw statement the C ABI takes.
func statementOf(info proof.SealVerifyInfo) (SealStatement, error) {
	st := SealStatement{SealProof: info.SealProof, Sector: info.SectorID.Number, Miner: info.SectorID.Miner, Proof: info.Proof}
	commR, err := commcid.CIDToReplicaCommitmentV1(info.SealedCID)
	if err != nil {
		return st, errf(CodeInvalidArgument, "SealedCID %v: %v", info.SealedCID, err)
	}
	commD, err := commcid.CIDToDataCommitmentV1(info.UnsealedCID)
	if err != nil {
		return st, errf(CodeInvalidArgument, "UnsealedCID %v: %v", info.UnsealedCID, err)
	}
	for _, f := range []struct {
		name string
		src  []byte
		dst  *[32]byte
	}{{"CommR", commR, &st.CommR}, {"CommD", commD, &st.CommD},
		{"Randomness", info.Randomness, &st.Ticket}, {"InteractiveRandomness", info.InteractiveRandomness, &st.Seed}} {
		if len(f.src) != 32 {
			return st, errf(CodeInvalidArgument, "%s is %d bytes, not 32", f.name, len(f.src))
		}
		copy(f.dst[:], f.src)
	}
	return st, nil
}
