package cuzk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

// The WinningPoSt / WindowPoSt / SnapDeals fixtures: sectors sealed and updated by
// filecoin-proofs, their vanilla proofs, and each kind's params (`cuzk-fixture --kinds`).
type postFixture struct {
	Proof         string               `json:"proof"`
	Randomness    [32]byte             `json:"randomness"`
	ProverID      [32]byte             `json:"prover_id"`
	Sectors       [][2]json.RawMessage `json:"sectors"`
	VanillaProofs []numBytes           `json:"vanilla_proofs"`
}

type updateFixture struct {
	CommROld      [32]byte   `json:"comm_r_old"`
	CommRNew      [32]byte   `json:"comm_r_new"`
	CommDNew      [32]byte   `json:"comm_d_new"`
	VanillaProofs []numBytes `json:"vanilla_proofs"`
}

type kindFixtures struct {
	ParamsDir string        `json:"params_dir"`
	Winning   postFixture   `json:"winning"`
	Window    postFixture   `json:"window"`
	Update    updateFixture `json:"update"`
}

// numBytes is bytes written as a JSON array of numbers (serde's Vec<u8>).
type numBytes []byte

func (b *numBytes) UnmarshalJSON(data []byte) error {
	var v []uint16
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*b = make([]byte, len(v))
	for i, x := range v {
		(*b)[i] = byte(x)
	}
	return nil
}

func raw(list []numBytes) [][]byte {
	out := make([][]byte, len(list))
	for i, b := range list {
		out[i] = b
	}
	return out
}

var (
	kindsOnce sync.Once
	kindsVal  *kindFixtures
	kindsErr  error
)

func getKinds(t *testing.T) *kindFixtures {
	t.Helper()
	kindsOnce.Do(func() {
		bin := fixtureBin()
		if bin == "" {
			kindsErr = fmt.Errorf("cuzk-fixture tool not found (set CUZK_FIXTURE_BIN)")
			return
		}
		cmd := exec.Command(bin, "--root", fixturesRoot(), "--kinds")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			kindsErr = fmt.Errorf("%s --kinds: %w\n%s", bin, err, stderr.Bytes())
			return
		}
		var k kindFixtures
		if kindsErr = json.Unmarshal(out, &k); kindsErr == nil {
			kindsVal = &k
		}
	})
	if kindsErr != nil {
		skipOrFail(t, kindsErr)
	}
	return kindsVal
}

// sectorInfos turns the fixture's (number, comm_r) pairs into go-state-types sector infos.
func sectorInfos(t *testing.T, p postFixture, sp abi.RegisteredSealProof) []proof.SectorInfo {
	t.Helper()
	var out []proof.SectorInfo
	for _, s := range p.Sectors {
		var n uint64
		var commR [32]byte
		if err := json.Unmarshal(s[0], &n); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(s[1], &commR); err != nil {
			t.Fatal(err)
		}
		c, err := commcid.ReplicaCommitmentV1ToCID(commR[:])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, proof.SectorInfo{SealProof: sp, SectorNumber: abi.SectorNumber(n), SealedCID: c})
	}
	return out
}

// minerOf is the actor id whose prover id the fixtures were made with (LEB128 payload).
func minerOf(t *testing.T, id [32]byte) abi.ActorID {
	t.Helper()
	var v uint64
	for i, shift := 0, uint(0); i < 10; i, shift = i+1, shift+7 {
		v |= uint64(id[i]&0x7f) << shift
		if id[i]&0x80 == 0 {
			break
		}
	}
	return abi.ActorID(v)
}

func TestProofKindsDropIn(t *testing.T) {
	k := getKinds(t)
	eng, err := cuzk.New(cuzk.Config{ParamsDir: k.ParamsDir, Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	miner := minerOf(t, k.Winning.ProverID)
	if p, _ := cuzk.ProverIDFromActor(miner); p != k.Winning.ProverID {
		t.Fatalf("miner %d does not give the fixture's prover id", miner)
	}

	// WinningPoSt (the SRS is loaded on first use).
	w, err := eng.GenerateWinningPoStWithVanilla(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, miner, k.Winning.Randomness[:], raw(k.Winning.VanillaProofs))
	if err != nil {
		t.Fatal(err)
	}
	sectors := sectorInfos(t, k.Winning, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	ok, err := eng.VerifyWinningPoSt(proof.WinningPoStVerifyInfo{Randomness: k.Winning.Randomness[:], Proofs: w, ChallengedSectors: sectors, Prover: miner})
	if err != nil || !ok {
		t.Fatalf("VerifyWinningPoSt: %v %v", ok, err)
	}
	other := k.Winning.Randomness
	other[0] ^= 1
	if ok, _ := eng.VerifyWinningPoSt(proof.WinningPoStVerifyInfo{Randomness: other[:], Proofs: w, ChallengedSectors: sectors, Prover: miner}); ok {
		t.Fatal("a proof verified against other randomness")
	}

	// WindowPoSt (V1_1 in go-state-types = V1_2 in filecoin-proofs): all partitions, then one
	// partition at a time merged.
	wp := abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1
	d, err := eng.GenerateWindowPoStWithVanilla(ctx, wp, miner, k.Window.Randomness[:], raw(k.Window.VanillaProofs))
	if err != nil {
		t.Fatal(err)
	}
	wsectors := sectorInfos(t, k.Window, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	info := proof.WindowPoStVerifyInfo{Randomness: k.Window.Randomness[:], Proofs: d, ChallengedSectors: wsectors, Prover: miner}
	if ok, err := eng.VerifyWindowPoSt(info); err != nil || !ok {
		t.Fatalf("VerifyWindowPoSt: %v %v", ok, err)
	}
	var merged []byte
	for i, part := range [][][]byte{raw(k.Window.VanillaProofs[:2]), raw(k.Window.VanillaProofs[2:])} {
		p, err := eng.GenerateSinglePartitionWindowPoStWithVanilla(ctx, wp, miner, k.Window.Randomness[:], part, uint(i))
		if err != nil {
			t.Fatal(err)
		}
		merged = append(merged, p.ProofBytes...)
	}
	info.Proofs = []proof.PoStProof{{PoStProof: wp, ProofBytes: merged}}
	if ok, err := eng.VerifyWindowPoSt(info); err != nil || !ok {
		t.Fatalf("merged partitions: %v %v", ok, err)
	}
	// Faulty sectors are listed on the error.
	_, err = eng.GenerateWindowPoStWithVanilla(ctx, wp, miner, other[:], raw(k.Window.VanillaProofs))
	var ce *cuzk.Error
	if !errors.Is(err, cuzk.ErrFaultySectors) || !errors.As(err, &ce) || len(ce.Sectors) != len(wsectors) {
		t.Fatalf("faulty sectors: %v", err)
	}

	// SnapDeals.
	u := k.Update
	oldC, _ := commcid.ReplicaCommitmentV1ToCID(u.CommROld[:])
	newC, _ := commcid.ReplicaCommitmentV1ToCID(u.CommRNew[:])
	dataC, _ := commcid.DataCommitmentV1ToCID(u.CommDNew[:])
	up, err := eng.GenerateUpdateProofWithVanilla(ctx, abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldC, newC, dataC, raw(u.VanillaProofs))
	if err != nil {
		t.Fatal(err)
	}
	rinfo := proof.ReplicaUpdateInfo{UpdateProofType: abi.RegisteredUpdateProof_StackedDrg2KiBV1, OldSealedSectorCID: oldC, NewSealedSectorCID: newC, NewUnsealedSectorCID: dataC, Proof: up}
	if ok, err := eng.VerifyUpdateProof(rinfo); err != nil || !ok {
		t.Fatalf("VerifyUpdateProof: %v %v", ok, err)
	}
	rinfo.NewSealedSectorCID = oldC
	if ok, _ := eng.VerifyUpdateProof(rinfo); ok {
		t.Fatal("an update proof verified against other commitments")
	}
	// Malformed vanilla bytes.
	if _, err := eng.GenerateUpdateProofWithVanilla(ctx, abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldC, newC, dataC, [][]byte{{1, 2, 3}}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("junk vanilla proof: %v", err)
	}
}
