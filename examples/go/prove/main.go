// Command prove proves a PoRep C2 with libcuzk through the Go bindings, or verifies a proof.
// It mirrors examples/c/prove.c:
//
//	prove <params_dir> <c1.json> <sector_id> <prover_id_hex> <out.proof>
//	prove verify <params_dir> <registered_proof> <sector_id> <prover_id_hex> <comm_r_hex>
//	             <comm_d_hex> <ticket_hex> <seed_hex> <proof_file>
//
// Exit status: 0 done (proof written, or proof valid), 1 error, 2 usage, 3 proof invalid.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

const (
	exitError   = 1
	exitUsage   = 2
	exitInvalid = 3
)

type usageError struct{ error }

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) == 5 && args[0] != "verify":
		err = prove(args[0], args[1], args[2], args[3], args[4])
	case len(args) == 10 && args[0] == "verify":
		err = verify(args[1:])
	default:
		err = usageError{errors.New("wrong arguments")}
	}
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "prove: %v\nusage: prove <params_dir> <c1.json> <sector_id> <prover_id_hex> <out.proof>\n"+
			"       prove verify <params_dir> <registered_proof> <sector_id> <prover_id_hex> <comm_r_hex>\n"+
			"              <comm_d_hex> <ticket_hex> <seed_hex> <proof_file>\n", err)
		os.Exit(exitUsage)
	case errors.Is(err, errInvalid):
		fmt.Fprintln(os.Stderr, "prove:", err)
		os.Exit(exitInvalid)
	default:
		fmt.Fprintln(os.Stderr, "prove:", err)
		os.Exit(exitError)
	}
}

var errInvalid = errors.New("proof does not verify")

func hex32(what, s string) ([32]byte, error) {
	var out [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return out, usageError{fmt.Errorf("%s must be 64 hex digits (32 bytes): %q", what, s)}
	}
	copy(out[:], b)
	return out, nil
}

func sectorNumber(s string) (abi.SectorNumber, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usageError{fmt.Errorf("sector_id: %v", err)}
	}
	return abi.SectorNumber(n), nil
}

func prove(paramsDir, c1Path, sectorArg, proverArg, outPath string) error {
	sector, err := sectorNumber(sectorArg)
	if err != nil {
		return err
	}
	prover, err := hex32("prover_id", proverArg)
	if err != nil {
		return err
	}
	c1, err := os.ReadFile(c1Path)
	if err != nil {
		return err
	}
	sealProof, err := cuzk.SealProofOfC1(c1)
	if err != nil {
		return err
	}

	// Ctrl-C cancels the job.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	eng, err := cuzk.New(cuzk.Config{ParamsDir: paramsDir})
	if err != nil {
		return err
	}
	defer eng.Close()
	took, err := eng.LoadSRS(ctx, sealProof, "")
	if err != nil {
		return err
	}
	fmt.Printf("SRS %d loaded in %.2f s\n", sealProof, took.Seconds())

	job, err := eng.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: sector, ProverID: prover})
	if err != nil {
		return err
	}
	proof, err := job.Wait(ctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(outPath, proof.Bytes, 0o644); err != nil {
		return err
	}
	fmt.Printf("job %d: %d-byte proof written to %s\n", job.ID(), len(proof.Bytes), outPath)
	t := proof.Timings
	for _, st := range []struct {
		name string
		d    time.Duration
	}{{"queue", t.Queue}, {"srs", t.SRS}, {"synthesis", t.Synthesis}, {"prove_queue", t.ProveQueue},
		{"prove", t.Prove}, {"verify", t.Verify}, {"total", t.Total}} {
		fmt.Printf("  %-12s %9.3f s\n", st.name, st.d.Seconds())
	}
	phases := make([]string, 0, len(t.Phases))
	for name := range t.Phases {
		phases = append(phases, name)
	}
	sort.Strings(phases)
	for _, name := range phases {
		fmt.Printf("  phase %-6s %9.3f s\n", name, t.Phases[name].Seconds())
	}
	fmt.Printf("backend %s, %d partition(s), verified: %v\n", t.Backend, t.Partitions, t.Verified)
	return nil
}

func verify(args []string) error {
	paramsDir := args[0]
	sealProof, err := cuzk.ParseSealProof(args[1])
	if err != nil {
		return usageError{err}
	}
	sector, err := sectorNumber(args[2])
	if err != nil {
		return err
	}
	info := cuzk.SealStatement{SealProof: sealProof, Sector: sector}
	for i, dst := range []*[32]byte{&info.ProverID, &info.CommR, &info.CommD, &info.Ticket, &info.Seed} {
		if *dst, err = hex32([]string{"prover_id", "comm_r", "comm_d", "ticket", "seed"}[i], args[3+i]); err != nil {
			return err
		}
	}
	if info.Proof, err = os.ReadFile(args[8]); err != nil {
		return err
	}
	eng, err := cuzk.New(cuzk.Config{ParamsDir: paramsDir})
	if err != nil {
		return err
	}
	defer eng.Close()
	ok, err := eng.VerifySealStatement(info)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", args[8], errInvalid)
	}
	fmt.Printf("proof %s: valid\n", args[8])
	return nil
}
