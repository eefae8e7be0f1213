package cuzk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

// miner recovers the actor id the fixture's prover id was derived from (its LEB128 payload).
func (s sector) miner(t testing.TB) abi.ActorID {
	t.Helper()
	id, n := binary.Uvarint(s.ProverID[:])
	if n <= 0 {
		t.Fatalf("prover id %x is not an ID address payload", s.ProverID)
	}
	if derived, err := cuzk.ProverIDFromActor(abi.ActorID(id)); err != nil || derived != s.ProverID {
		t.Fatalf("prover id %x is not actor %d's (%x, %v)", s.ProverID, id, derived, err)
	}
	return abi.ActorID(id)
}

// sealVerifyInfo is the go-state-types statement of a proof of s, as a Lotus node holds it.
func (s sector) sealVerifyInfo(t testing.TB, p []byte) proof.SealVerifyInfo {
	t.Helper()
	sealed, err := commcid.ReplicaCommitmentV1ToCID(s.CommR[:])
	if err != nil {
		t.Fatal(err)
	}
	unsealed, err := commcid.DataCommitmentV1ToCID(s.CommD[:])
	if err != nil {
		t.Fatal(err)
	}
	return proof.SealVerifyInfo{
		SealProof:             s.proof(t),
		SectorID:              abi.SectorID{Miner: s.miner(t), Number: abi.SectorNumber(s.SectorID)},
		Randomness:            abi.SealRandomness(bytes.Clone(s.Ticket[:])),
		InteractiveRandomness: abi.InteractiveSealRandomness(bytes.Clone(s.Seed[:])),
		Proof:                 p,
		SealedCID:             sealed,
		UnsealedCID:           unsealed,
	}
}

// TestSealCommitPhase2DropIn uses the engine the way a node swapping filecoin-ffi's calls
// would: no LoadSRS, two concurrent SealCommitPhase2 calls as the first uses (the SRS is
// loaded once, on demand), then VerifySeal with go-state-types' SealVerifyInfo.
func TestSealCommitPhase2DropIn(t *testing.T) {
	fx := getFixture(t)
	s := fx.Sector
	eng, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if loaded, _, err := eng.SRSStatus(s.proof(t)); err != nil || loaded {
		t.Fatalf("fresh engine: SRS loaded %v (%v)", loaded, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c1 := s.c1(t)
	var wg sync.WaitGroup
	proofs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range proofs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proofs[i], errs[i] = eng.SealCommitPhase2(ctx, c1, abi.SectorNumber(s.SectorID), s.miner(t))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("SealCommitPhase2 call %d: %v", i, err)
		}
	}
	if loaded, n, err := eng.SRSStatus(s.proof(t)); err != nil || !loaded || n == 0 {
		t.Errorf("after first use: SRS loaded %v, %d bytes (%v)", loaded, n, err)
	}
	for i, p := range proofs {
		if len(p) != 192 {
			t.Errorf("proof %d: %d bytes, want 192 (one 2 KiB partition)", i, len(p))
		}
		ok, err := eng.VerifySeal(s.sealVerifyInfo(t, p))
		if err != nil || !ok {
			t.Errorf("VerifySeal(proof %d): %v %v, want true", i, ok, err)
		}
	}

	// A wrong statement is a clean false; malformed ones are errors naming the field.
	wrongSeed := s.sealVerifyInfo(t, proofs[0])
	wrongSeed.InteractiveRandomness[0] ^= 1
	wrongMiner := s.sealVerifyInfo(t, proofs[0])
	wrongMiner.SectorID.Miner++
	for name, info := range map[string]proof.SealVerifyInfo{"seed": wrongSeed, "miner": wrongMiner} {
		if ok, err := eng.VerifySeal(info); err != nil || ok {
			t.Errorf("VerifySeal with a wrong %s: %v %v, want false, nil", name, ok, err)
		}
	}
	swapped := s.sealVerifyInfo(t, proofs[0])
	swapped.SealedCID, swapped.UnsealedCID = swapped.UnsealedCID, swapped.SealedCID
	shortTicket := s.sealVerifyInfo(t, proofs[0])
	shortTicket.Randomness = shortTicket.Randomness[:31]
	for name, info := range map[string]proof.SealVerifyInfo{"swapped CIDs": swapped, "31-byte ticket": shortTicket} {
		if _, err := eng.VerifySeal(info); !errors.Is(err, cuzk.ErrInvalidArgument) {
			t.Errorf("VerifySeal with %s: %v, want ErrInvalidArgument", name, err)
		}
	}

	if _, err := eng.SealCommitPhase2(ctx, []byte(`{"registered_proof":"StackedDrg2KiBV1_1"}`), 1, 1000); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Errorf("SealCommitPhase2 with a C1 without vanilla proofs: %v, want ErrInvalidInput", err)
	}
}

// TestSealCommitPhase2MissingParams: first use with no params file is ErrSRSLoad naming it.
func TestSealCommitPhase2MissingParams(t *testing.T) {
	fx := getFixture(t)
	eng, err := cuzk.New(cuzk.Config{ParamsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, err = eng.SealCommitPhase2(context.Background(), fx.Sector.c1(t), abi.SectorNumber(fx.Sector.SectorID), fx.Sector.miner(t))
	if !errors.Is(err, cuzk.ErrSRSLoad) {
		t.Errorf("SealCommitPhase2 without params: %v, want ErrSRSLoad", err)
	}
}

// TestFirstUseLoadFollowsContext: the SRS load inside a first SealCommitPhase2 stops when ctx
// ends (the error matches ctx's and ErrCancelled) and leaves nothing resident; Close stops a
// load in flight instead of waiting it out. The 2 KiB test SRS is a ~1 GB decode, over a second
// on 2 cores, against deadlines of 30 ms.
func TestFirstUseLoadFollowsContext(t *testing.T) {
	fx := getFixture(t)
	eng, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sp := fx.Sector.proof(t)
	c1, sector, miner := fx.Sector.c1(t), abi.SectorNumber(fx.Sector.SectorID), fx.Sector.miner(t)

	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eng.SealCommitPhase2(done, c1, sector, miner); !errors.Is(err, context.Canceled) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Errorf("SealCommitPhase2 with an ended context: %v, want context.Canceled and ErrCancelled", err)
	}

	short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = eng.SealCommitPhase2(short, c1, sector, miner)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Errorf("SealCommitPhase2 past its deadline during the load: %v, want DeadlineExceeded and ErrCancelled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the cancelled load returned after %v", took)
	}
	if loaded, _, err := eng.SRSStatus(sp); err != nil || loaded {
		t.Errorf("after a cancelled load: loaded=%v err=%v, want nothing resident", loaded, err)
	}

	// Close during a load: the load stops (ErrCancelled or ErrShuttingDown), Close returns.
	other, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	loadErr := make(chan error, 1)
	go func() {
		_, err := other.LoadSRS(context.Background(), sp, "")
		loadErr <- err
	}()
	time.Sleep(30 * time.Millisecond)
	start = time.Now()
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	err = <-loadErr
	if !errors.Is(err, cuzk.ErrCancelled) && !errors.Is(err, cuzk.ErrShuttingDown) {
		t.Errorf("a load in flight at Close: %v, want ErrCancelled or ErrShuttingDown", err)
	}
	t.Logf("Close with a load in flight took %v", time.Since(start))
}

// TestZeroConfigFindsParamsLikeFilecoinFFI: the README's cuzk.New(cuzk.Config{}) reads the
// params from FIL_PROOFS_PARAMETER_CACHE, as filecoin-ffi does.
func TestZeroConfigFindsParamsLikeFilecoinFFI(t *testing.T) {
	fx := getFixture(t)
	t.Setenv("FIL_PROOFS_PARAMETER_CACHE", fx.ParamsDir)
	eng, err := cuzk.New(cuzk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.LoadSRS(context.Background(), fx.Sector.proof(t), ""); err != nil {
		t.Fatalf("LoadSRS with a zero Config and FIL_PROOFS_PARAMETER_CACHE=%s: %v", fx.ParamsDir, err)
	}
}

// TestSyntheticPoRepDropIn: a SyntheticPoRep sector (Curio's UseSyntheticPoRep; registered
// proof 10, sealed with generate_synth_proofs before C1) proves through SealCommitPhase2 and
// verifies through VerifySeal, like any other.
func TestSyntheticPoRepDropIn(t *testing.T) {
	fx := getFixture(t)
	bin := fixtureBin()
	if bin == "" {
		skipOrFail(t, errors.New("cuzk-fixture tool not found (set CUZK_FIXTURE_BIN)"))
	}
	f, err := runFixtureTool(bin, "--root", fixturesRoot(), "--sector-only", "StackedDrg2KiBV1_1_Feat_SyntheticPoRep")
	if err != nil {
		t.Fatal(err)
	}
	s := f.Sector
	if s.proof(t) != abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep {
		t.Fatalf("fixture proof %v, want StackedDrg2KiBV1_1_Feat_SyntheticPoRep", s.proof(t))
	}
	eng, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	p, err := eng.SealCommitPhase2(ctx, s.c1(t), abi.SectorNumber(s.SectorID), s.miner(t))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := eng.VerifySeal(s.sealVerifyInfo(t, p)); err != nil || !ok {
		t.Errorf("VerifySeal of the SyntheticPoRep proof: %v %v, want true", ok, err)
	}
}
