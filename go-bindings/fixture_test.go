package cuzk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

// The 2 KiB test fixtures are made by the Rust side (cuzk-fixture: seeded Groth16 params and
// a sealed sector's C1 output) and cached in $CUZK_FIXTURES_DIR (/var/tmp/cuzk-fixtures).
// Without them the tests that prove skip, unless CUZK_REQUIRE_FIXTURES=1 (make test-examples
// sets it), which turns the skip into a failure.

type sector struct {
	RegisteredProof string   `json:"registered_proof"`
	SectorID        uint64   `json:"sector_id"`
	ProverID        [32]byte `json:"prover_id"`
	Ticket          [32]byte `json:"ticket"`
	Seed            [32]byte `json:"seed"`
	CommR           [32]byte `json:"comm_r"`
	CommD           [32]byte `json:"comm_d"`
	C1Path          string   `json:"c1_path"`
}

type fixture struct {
	ParamsDir string `json:"params_dir"`
	Sector    sector `json:"sector"`
}

func (s sector) proof(t testing.TB) abi.RegisteredSealProof {
	t.Helper()
	p, err := cuzk.ParseSealProof(s.RegisteredProof)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (s sector) c1(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(s.C1Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// statement is what VerifySeal checks for a proof of s.
func (s sector) statement(t testing.TB, proof []byte) cuzk.SealStatement {
	return cuzk.SealStatement{
		SealProof: s.proof(t),
		Sector:    abi.SectorNumber(s.SectorID),
		ProverID:  s.ProverID,
		CommR:     s.CommR,
		CommD:     s.CommD,
		Ticket:    s.Ticket,
		Seed:      s.Seed,
		Proof:     proof,
	}
}

func fixturesRoot() string {
	if d := os.Getenv("CUZK_FIXTURES_DIR"); d != "" {
		return d
	}
	return "/var/tmp/cuzk-fixtures"
}

// fixtureBin is the cuzk-fixture tool, or "" when it is not built.
func fixtureBin() string {
	cands := []string{os.Getenv("CUZK_FIXTURE_BIN")}
	if d := os.Getenv("CARGO_TARGET_DIR"); d != "" {
		cands = append(cands, filepath.Join(d, "release", "cuzk-fixture"))
	}
	cands = append(cands, "/var/tmp/cuzk-target/release/cuzk-fixture")
	for _, c := range cands {
		if st, err := os.Stat(c); c != "" && err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// runFixtureTool runs cuzk-fixture (which reuses cached fixtures or generates them) and
// parses its one-line JSON answer.
func runFixtureTool(bin string, args ...string) (*fixture, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w\n%s", bin, args, err, stderr.Bytes())
	}
	var f fixture
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("%s %v: parsing %q: %w", bin, args, out, err)
	}
	return &f, nil
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
	fixtureErr  error
)

func loadFixture() (*fixture, error) {
	root := fixturesRoot()
	if bin := fixtureBin(); bin != "" {
		return runFixtureTool(bin, "--root", root)
	}
	// No tool: use a cached sector of the default seed as-is.
	b, err := os.ReadFile(filepath.Join(root, "sectors", "StackedDrg2KiBV1_1-c0ffee", "sector.json"))
	if err != nil {
		return nil, fmt.Errorf("no cuzk-fixture tool (set CUZK_FIXTURE_BIN) and no cached fixture: %w", err)
	}
	f := fixture{ParamsDir: filepath.Join(root, "params")}
	if err := json.Unmarshal(b, &f.Sector); err != nil {
		return nil, err
	}
	return &f, nil
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CUZK_REQUIRE_FIXTURES") == "1" {
		t.Fatalf("fixtures required: %v", err)
	}
	t.Skipf("no 2 KiB fixtures: %v", err)
}

// getFixture returns the default 2 KiB fixture (params dir and sealed sector).
func getFixture(t testing.TB) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { fixtureVal, fixtureErr = loadFixture() })
	if fixtureErr != nil {
		skipOrFail(t, fixtureErr)
	}
	return fixtureVal
}

// extraSector seals another 2 KiB sector (a fraction of a second) into a temp root, for tests
// that need distinct statements. It needs the cuzk-fixture tool.
func extraSector(t testing.TB, seed int) sector {
	t.Helper()
	bin := fixtureBin()
	if bin == "" {
		skipOrFail(t, fmt.Errorf("cuzk-fixture tool not found (set CUZK_FIXTURE_BIN)"))
	}
	f, err := runFixtureTool(bin, "--root", t.TempDir(), "--sector-only", "--seed", strconv.Itoa(seed))
	if err != nil {
		t.Fatal(err)
	}
	return f.Sector
}

var (
	sharedOnce sync.Once
	sharedEng  *cuzk.Engine
	sharedErr  error
)

// sharedEngine is one engine with the 2 KiB SRS loaded, shared by the tests that prove (an
// SRS load takes seconds and a GiB); TestMain closes it.
func sharedEngine(t testing.TB) (*cuzk.Engine, *fixture) {
	t.Helper()
	fx := getFixture(t)
	sharedOnce.Do(func() {
		sharedEng, sharedErr = cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
		if sharedErr == nil {
			var p abi.RegisteredSealProof
			if p, sharedErr = cuzk.ParseSealProof(fx.Sector.RegisteredProof); sharedErr == nil {
				_, sharedErr = sharedEng.LoadSRS(context.Background(), p, "")
			}
		}
	})
	if sharedErr != nil {
		t.Fatalf("shared engine: %v", sharedErr)
	}
	return sharedEng, fx
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEng != nil {
		sharedEng.Close()
	}
	os.Exit(code)
}
