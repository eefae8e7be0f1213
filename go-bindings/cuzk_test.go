package cuzk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-address"
	"github.com/filecoin-project/go-state-types/abi"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

func TestVersionAndABI(t *testing.T) {
	if got := cuzk.ABIVersion(); got != 1 {
		t.Fatalf("ABIVersion() = %d, want 1", got)
	}
	if v := cuzk.Version(); v == "" || strings.Count(v, ".") != 2 {
		t.Fatalf("Version() = %q", v)
	}
	if err := cuzk.CheckABI(1, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]uint32{{2, 1}, {1, 2}, {0, 1}} {
		err := cuzk.CheckABI(c[0], c[1])
		if !errors.Is(err, cuzk.ErrUnsupported) || !strings.Contains(err.Error(), "ABI version") {
			t.Errorf("CheckABI(lib %d, header %d) = %v, want an ErrUnsupported naming the ABI version", c[0], c[1], err)
		}
	}
}

func TestErrorMatching(t *testing.T) {
	var err error = &cuzk.Error{Code: cuzk.CodeSRSNotLoaded, Message: "no SRS loaded for X"}
	wrapped := fmt.Errorf("context: %w", err)
	if !errors.Is(wrapped, cuzk.ErrSRSNotLoaded) {
		t.Error("wrapped SRS-not-loaded error does not match ErrSRSNotLoaded")
	}
	for _, other := range []error{cuzk.ErrSRSLoad, cuzk.ErrInvalidArgument, cuzk.ErrTimeout, context.Canceled} {
		if errors.Is(err, other) {
			t.Errorf("%v matches %v", err, other)
		}
	}
	var ce *cuzk.Error
	if !errors.As(wrapped, &ce) || ce.Message != "no SRS loaded for X" {
		t.Errorf("errors.As: %+v", ce)
	}
	if got := cuzk.CodeSRSNotLoaded.String(); got != "SRS not loaded" {
		t.Errorf("status name %q", got)
	}
	if got := err.Error(); got != "cuzk: SRS not loaded: no SRS loaded for X" {
		t.Errorf("Error() = %q", got)
	}
}

func TestConfig(t *testing.T) {
	js, err := cuzk.ConfigJSON(cuzk.Config{})
	if err != nil || js != "{}" {
		t.Fatalf("zero Config marshals to %q, %v; want {} (all defaults)", js, err)
	}
	js, _ = cuzk.ConfigJSON(cuzk.Config{SkipVerify: true, JobTTL: 1500 * time.Millisecond, DrainOnClose: true, ParamsDir: `/a "b"`, FullSynthesis: true})
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	if m["verify"] != false || m["job_ttl_secs"] != 2.0 || m["drain_on_free"] != true || m["params_dir"] != `/a "b"` || m["record_circuits"] != false {
		t.Errorf("config JSON %s", js)
	}

	if err := cuzk.SetLogFilter("cuzk=info,warn"); err != nil {
		t.Errorf("SetLogFilter: %v", err)
	}
	if err := cuzk.SetLogFilter("cuzk=loud"); !errors.Is(err, cuzk.ErrInvalidArgument) {
		t.Errorf("SetLogFilter of a malformed filter: %v, want an invalid-argument error", err)
	}
	_ = cuzk.SetLogFilter("warn")

	e, err := cuzk.New(cuzk.Config{})
	if err != nil {
		t.Fatalf("New with defaults: %v", err)
	}
	st, err := e.StatusJSON()
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		ABIVersion int    `json:"abi_version"`
		Backend    string `json:"backend"`
	}
	if err := json.Unmarshal(st, &status); err != nil || status.ABIVersion != 1 || status.Backend == "" {
		t.Errorf("StatusJSON() = %s (%v)", st, err)
	}
	// The typed status holds every key the library writes (a key it does not know is a field
	// to add to cuzk.Status).
	typed, err := e.Status()
	if err != nil || typed.ABIVersion != 1 || typed.Backend != status.Backend || typed.Queue.MaxJobs == 0 || typed.Memory.BudgetSource == "" {
		t.Errorf("Status() = %+v, %v", typed, err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(st, &keys)
	known, _ := json.Marshal(typed)
	var knownKeys map[string]json.RawMessage
	_ = json.Unmarshal(known, &knownKeys)
	for k := range keys {
		if _, ok := knownKeys[k]; !ok {
			t.Errorf("the status JSON's key %q has no field in cuzk.Status", k)
		}
	}
	metrics, err := e.Metrics()
	if err != nil || !strings.Contains(metrics, `cuzk_jobs_submitted_total{kind="porep"} 0`) {
		t.Errorf("Metrics() = %q, %v", metrics, err)
	}
	rec := httptest.NewRecorder()
	e.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "cuzk_jobs_submitted_total") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("MetricsHandler: %d %q", rec.Code, rec.Body.String())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []cuzk.Config{{Backend: "gpu"}, {SRSValidation: "some"}, {SynthesisWorkers: -1}} {
		if e, err := cuzk.New(c); !errors.Is(err, cuzk.ErrInvalidArgument) {
			t.Errorf("New(%+v) = %v, want ErrInvalidArgument", c, err)
			if e != nil {
				e.Close()
			}
		}
	}
	// No CUDA in a CPU build, or no device: a clear Unsupported. (A CUDA build on a GPU
	// machine may start it.)
	if e, err := cuzk.New(cuzk.Config{Backend: "cuda"}); err == nil {
		t.Log("cuda backend available")
		e.Close()
	} else if !errors.Is(err, cuzk.ErrUnsupported) {
		t.Errorf("New(cuda) = %v, want ErrUnsupported", err)
	}
}

func TestProverIDFromActor(t *testing.T) {
	for _, id := range []abi.ActorID{0, 1, 127, 128, 1000, 1430, 1<<63 - 1} {
		got, err := cuzk.ProverIDFromActor(id)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := address.NewIDAddress(uint64(id))
		var want [32]byte
		copy(want[:], a.Payload())
		if got != want {
			t.Errorf("actor %d: %x, want %x", id, got, want)
		}
	}
	// Spelled out: filecoin-ffi's toProverID is the ID address payload, a LEB128 varint.
	got, _ := cuzk.ProverIDFromActor(1000)
	if !bytes.Equal(got[:3], []byte{0xe8, 0x07, 0x00}) {
		t.Errorf("actor 1000: %x", got)
	}
}

func TestBadInput(t *testing.T) {
	fx := getFixture(t)
	ctx := context.Background()
	e, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c1 := fx.Sector.c1(t)
	proof := fx.Sector.proof(t)

	expect := func(what string, err, sentinel error) {
		t.Helper()
		var ce *cuzk.Error
		if !errors.Is(err, sentinel) || !errors.As(err, &ce) || ce.Message == "" {
			t.Errorf("%s: got %v, want %v with a message", what, err, sentinel)
		}
	}

	// No SRS loaded yet.
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: abi.SectorNumber(fx.Sector.SectorID), ProverID: fx.Sector.ProverID})
	expect("submit before LoadSRS", err, cuzk.ErrSRSNotLoaded)
	if loaded, n, err := e.SRSStatus(proof); err != nil || loaded || n != 0 {
		t.Errorf("SRSStatus before load: %v %d %v", loaded, n, err)
	}
	_, err = e.LoadSRS(ctx, proof, "/nonexistent/v28-missing.params")
	expect("LoadSRS of a missing file", err, cuzk.ErrSRSLoad)
	_, err = e.LoadSRS(ctx, abi.RegisteredSealProof(99), "")
	expect("LoadSRS of proof 99", err, cuzk.ErrInvalidArgument)
	_, err = e.EvictSRS(abi.RegisteredSealProof(-1))
	expect("EvictSRS of proof -1", err, cuzk.ErrInvalidArgument)
	if was, err := e.EvictSRS(proof); err != nil || was {
		t.Errorf("EvictSRS with nothing loaded: %v %v", was, err)
	}

	// Malformed requests are rejected at submit, whatever the SRS.
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: []byte(`{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":7}`), Sector: 1, Miner: 1000})
	expect("submit of a broken C1", err, cuzk.ErrInvalidInput)
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: []byte("not json"), Sector: 1, Miner: 1000})
	expect("submit of non-JSON", err, cuzk.ErrInvalidInput)
	_, err = e.SubmitC2(ctx, cuzk.C2Request{Sector: 1, Miner: 1000})
	expect("submit without C1", err, cuzk.ErrInvalidArgument)
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: 1, Miner: 1000, RequestID: "sector-1\x00-retry"})
	expect("submit with a NUL in the request id", err, cuzk.ErrInvalidArgument)
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: 1, Miner: 1000, ProverID: [32]byte{1}})
	expect("submit with a ProverID of another miner", err, cuzk.ErrInvalidArgument)
	if _, err := cuzk.SealProofOfC1([]byte("{}")); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Errorf("SealProofOfC1({}) = %v", err)
	}
	if p, err := cuzk.SealProofOfC1(c1); err != nil || p != proof {
		t.Errorf("SealProofOfC1(fixture) = %v, %v; want %v", p, err, proof)
	}

	if state, p, err := cuzk.JobWithID(e, 1<<40).Poll(); state != cuzk.JobUnknown || p != nil {
		t.Errorf("Poll of an unknown job: %v %v %v", state, p, err)
	}
	expect("poll of an unknown job", pollErr(cuzk.JobWithID(e, 1<<40)), cuzk.ErrUnknownJob)
	_, err = cuzk.JobWithID(e, 1<<40).Wait(ctx)
	expect("wait on an unknown job", err, cuzk.ErrUnknownJob)
	_, err = cuzk.JobWithID(e, 1<<40).Cancel()
	expect("cancel of an unknown job", err, cuzk.ErrUnknownJob)

	// VerifySeal: malformed proofs are errors; well-formed wrong ones are false.
	st := fx.Sector.statement(t, make([]byte, 100))
	_, err = e.VerifySealStatement(st)
	if err == nil {
		t.Error("VerifySeal of a 100-byte proof: no error")
	}
	st.Proof = nil
	_, err = e.VerifySealStatement(st)
	expect("VerifySeal without proof", err, cuzk.ErrInvalidArgument)
	st = fx.Sector.statement(t, make([]byte, 192))
	st.SealProof = 99
	_, err = e.VerifySealStatement(st)
	expect("VerifySeal of proof 99", err, cuzk.ErrInvalidArgument)

	// A closed engine.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = e.SubmitC2(ctx, cuzk.C2Request{C1: c1, Sector: 1, Miner: 1000})
	expect("submit after Close", err, cuzk.ErrShuttingDown)
	_, err = e.Status()
	expect("Status after Close", err, cuzk.ErrShuttingDown)
	rec := httptest.NewRecorder()
	e.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("MetricsHandler after Close: %d, want 503", rec.Code)
	}
	_, err = e.LoadSRS(ctx, proof, "")
	expect("LoadSRS after Close", err, cuzk.ErrShuttingDown)
}

func pollErr(j *cuzk.Job) error {
	_, _, err := j.Poll()
	return err
}

// gcHammer forces garbage collections until the returned stop function is called, to flush
// out native handles used after their Go owner became unreachable (a missing KeepAlive).
func gcHammer() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.GC()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// privateEngine returns a new engine with the 2 KiB SRS loaded, collecting garbage between
// the calls.
func privateEngine(t *testing.T, fx *fixture) *cuzk.Engine {
	e, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	took, err := e.LoadSRS(context.Background(), fx.Sector.proof(t), "")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	loaded, n, err := e.SRSStatus(fx.Sector.proof(t))
	if err != nil || !loaded || n == 0 {
		t.Fatalf("SRSStatus after load: %v %d %v", loaded, n, err)
	}
	t.Logf("SRS loaded in %v (%d MiB resident)", took, n>>20)
	return e
}

// submitAll submits one job per sector on a new engine, from one goroutine each; the engine
// stays reachable only through the jobs.
func submitAll(t *testing.T, fx *fixture, sectors []sector) []*cuzk.Job {
	e := privateEngine(t, fx)
	c1s := make([][]byte, len(sectors))
	for i, s := range sectors {
		c1s[i] = s.c1(t)
	}
	jobs := make([]*cuzk.Job, len(sectors))
	errs := make([]error, len(sectors))
	var wg sync.WaitGroup
	for i, s := range sectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := cuzk.C2Request{
				C1: c1s[i], Sector: abi.SectorNumber(s.SectorID), ProverID: s.ProverID,
				Priority: int32(i), RequestID: fmt.Sprintf("concurrent-%d", i),
			}
			runtime.GC()
			jobs[i], errs[i] = e.SubmitC2(context.Background(), req)
			if errs[i] != nil {
				return
			}
			// The request id makes a resubmission return the same job.
			if again, err := e.SubmitC2(context.Background(), req); err != nil || again.ID() != jobs[i].ID() {
				errs[i] = fmt.Errorf("resubmission gave %v, %v; want job %d", again, err, jobs[i].ID())
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: submit: %v", i, err)
		}
	}
	return jobs
}

// TestProveConcurrentlyWithGC proves three different 2 KiB sectors, submitted and awaited
// from three goroutines on an engine that only the jobs keep reachable, while garbage is
// collected every few milliseconds (a missing KeepAlive would let the finalizer free the
// engine under a native call). Each proof must verify for its own sector and no other (no
// mix-ups); once the jobs are dropped the finalizer must free the engine.
func TestProveConcurrentlyWithGC(t *testing.T) {
	fx := getFixture(t)
	sectors := []sector{fx.Sector, extraSector(t, 1), extraSector(t, 2)}
	for i := range sectors {
		for j := range i {
			if sectors[i].SectorID == sectors[j].SectorID || sectors[i].CommR == sectors[j].CommR {
				t.Fatalf("fixtures %d and %d are not distinct", i, j)
			}
		}
	}
	before := cuzk.LiveEngines()
	stop := gcHammer()
	jobs := submitAll(t, fx, sectors)
	if jobs[0].ID() == jobs[1].ID() || jobs[1].ID() == jobs[2].ID() || jobs[0].ID() == jobs[2].ID() {
		t.Errorf("job ids not distinct: %d %d %d", jobs[0].ID(), jobs[1].ID(), jobs[2].ID())
	}
	if state, _, err := jobs[2].Poll(); err != nil || state.Final() {
		t.Errorf("Poll right after submit: %v %v", state, err)
	}
	proofs := make([]*cuzk.Proof, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			proofs[i], errs[i] = j.Wait(ctx)
		}()
	}
	wg.Wait()
	stop()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("job %d (sector %d): Wait: %v", jobs[i].ID(), sectors[i].SectorID, err)
		}
	}

	for i, p := range proofs {
		tm := p.Timings
		t.Logf("job %d (sector %d): total %v (queue %v, synthesis %v, prove queue %v, prove %v, verify %v; %s, %d partition(s))",
			jobs[i].ID(), sectors[i].SectorID, tm.Total, tm.Queue, tm.Synthesis, tm.ProveQueue, tm.Prove, tm.Verify, tm.Backend, tm.Partitions)
		if tm.Partitions < 1 || len(p.Bytes) != 192*tm.Partitions || tm.ProofBytes != len(p.Bytes) {
			t.Errorf("job %d: %d proof bytes for %d partitions (timings say %d bytes)", i, len(p.Bytes), tm.Partitions, tm.ProofBytes)
		}
		if !tm.Verified || tm.Prove <= 0 || tm.Synthesis <= 0 || tm.Total < tm.Prove+tm.Synthesis || len(tm.Phases) == 0 {
			t.Errorf("job %d: implausible timings %+v", i, tm)
		}
		// The result stays available, byte for byte; cancelling a finished job is a no-op.
		state, again, err := jobs[i].Poll()
		if err != nil || state != cuzk.JobDone || again == nil || !bytes.Equal(again.Bytes, p.Bytes) {
			t.Errorf("job %d: Poll after Wait: %v %v (same bytes: %v)", i, state, err, again != nil && bytes.Equal(again.Bytes, p.Bytes))
		}
		if c, err := jobs[i].Cancel(); err != nil || c {
			t.Errorf("job %d: Cancel when done: %v %v, want false, nil", i, c, err)
		}
	}

	// Verify on a fresh engine with no SRS: it reads the .vk file from the params dir.
	v, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for i, s := range sectors {
		for j, p := range proofs {
			ok, err := v.VerifySealStatement(s.statement(t, p.Bytes))
			if err != nil {
				t.Errorf("verify proof %d for sector %d: %v", j, i, err)
			} else if ok != (i == j) {
				t.Errorf("proof %d verifies for sector %d: %v, want %v", j, i, ok, i == j)
			}
		}
	}
	// Nor does a proof hold for a changed statement of its own sector.
	wrongSector := fx.Sector.statement(t, proofs[0].Bytes)
	wrongSector.Sector++
	wrongMiner := fx.Sector.statement(t, proofs[0].Bytes)
	wrongMiner.ProverID, wrongMiner.Miner = [32]byte{}, 1234
	wrongSeed := fx.Sector.statement(t, proofs[0].Bytes)
	wrongSeed.Seed[0] ^= 1
	for name, st := range map[string]cuzk.SealStatement{"sector": wrongSector, "miner": wrongMiner, "seed": wrongSeed} {
		if ok, err := v.VerifySealStatement(st); err != nil || ok {
			t.Errorf("VerifySeal with a wrong %s: %v %v, want false, nil", name, ok, err)
		}
	}

	// Only the jobs reference the proving engine: without them the finalizer must free it.
	jobs = nil
	deadline := time.Now().Add(60 * time.Second)
	for cuzk.LiveEngines() > before+1 && time.Now().Before(deadline) { // +1: v
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	if n := cuzk.LiveEngines(); n != before+1 {
		t.Errorf("%d engines live, want %d: the finalizer did not free an unreachable engine", n, before+1)
	}
}

// submitShared submits the default fixture on the shared engine.
func submitShared(t *testing.T) (*cuzk.Engine, *cuzk.Job) {
	e, fx := sharedEngine(t)
	job, err := e.SubmitC2(context.Background(), cuzk.C2Request{
		C1: fx.Sector.c1(t), Sector: abi.SectorNumber(fx.Sector.SectorID), ProverID: fx.Sector.ProverID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, job
}

// expectCancelled checks a job ended cancelled, as Poll and Cancel see it.
func expectCancelled(t *testing.T, job *cuzk.Job) {
	t.Helper()
	state, proof, err := job.Poll()
	if state != cuzk.JobCancelled || proof != nil || !errors.Is(err, cuzk.ErrCancelled) {
		t.Errorf("Poll after cancel: %v %v %v, want cancelled with ErrCancelled", state, proof, err)
	}
	if c, err := job.Cancel(); err != nil || c {
		t.Errorf("second Cancel: %v %v, want false, nil", c, err)
	}
}

func TestContextCancel(t *testing.T) {
	_, job := submitShared(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	p, err := job.Wait(ctx)
	if p != nil || !errors.Is(err, context.Canceled) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Fatalf("Wait = %v, %v; want an error matching context.Canceled and ErrCancelled", p, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Wait returned %v after its context was cancelled at 100ms", d)
	}
	expectCancelled(t, job)
}

func TestContextTimeout(t *testing.T) {
	_, job := submitShared(t)
	start := time.Now() // before the context: its deadline is then at least 300ms after start
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := job.Wait(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Fatalf("Wait = %v; want an error matching context.DeadlineExceeded and ErrCancelled", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("Wait with a 300ms timeout returned after %v", d)
	}
	expectCancelled(t, job)

	// An already-cancelled context submits nothing.
	e, fx := sharedEngine(t)
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if j, err := e.SubmitC2(done, cuzk.C2Request{C1: fx.Sector.c1(t), Sector: 1, Miner: 1000}); j != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("SubmitC2 with a cancelled context: %v %v", j, err)
	}
}

func TestExplicitCancel(t *testing.T) {
	_, job := submitShared(t)
	c, err := job.Cancel()
	if err != nil || !c {
		t.Fatalf("Cancel of a fresh job: %v %v, want true, nil", c, err)
	}
	_, err = job.Wait(context.Background())
	if !errors.Is(err, cuzk.ErrCancelled) || errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled job: %v, want ErrCancelled only", err)
	}
	expectCancelled(t, job)
}

// TestCloseWithJobsInFlight closes an engine while goroutines wait on a job being synthesized
// and on a queued one: the waiters must return at once and Close promptly. (Once a partition
// is in the prove stage, the library finishes it before cuzk_engine_free returns: Close then
// takes up to one partition's proving time; that case is not asserted here.)
func TestCloseWithJobsInFlight(t *testing.T) {
	fx := getFixture(t)
	e, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.LoadSRS(context.Background(), fx.Sector.proof(t), ""); err != nil {
		t.Fatal(err)
	}
	var jobs []*cuzk.Job
	for i := 0; i < 2; i++ {
		j, err := e.SubmitC2(context.Background(), cuzk.C2Request{
			C1: fx.Sector.c1(t), Sector: abi.SectorNumber(fx.Sector.SectorID), ProverID: fx.Sector.ProverID,
		})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	type outcome struct {
		err error
		at  time.Time
	}
	waited := make(chan outcome, len(jobs))
	for _, j := range jobs {
		go func() {
			_, err := j.Wait(context.Background())
			waited <- outcome{err, time.Now()}
		}()
	}
	time.Sleep(300 * time.Millisecond) // both waiters are inside cuzk_job_wait
	start := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	closeTook := time.Since(start)
	t.Logf("Close took %v", closeTook)
	if closeTook > 15*time.Second {
		t.Errorf("Close with jobs in flight took %v", closeTook)
	}
	for range jobs {
		select {
		case o := <-waited:
			if !errors.Is(o.err, cuzk.ErrShuttingDown) && !errors.Is(o.err, cuzk.ErrCancelled) {
				t.Errorf("Wait across Close: %v, want ErrShuttingDown or ErrCancelled", o.err)
			}
			if d := o.at.Sub(start); d > time.Second {
				t.Errorf("a waiter returned %v after Close began", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a waiter did not return after Close")
		}
	}
	if state, _, err := jobs[0].Poll(); state != cuzk.JobUnknown || !errors.Is(err, cuzk.ErrShuttingDown) {
		t.Errorf("Poll after Close: %v", err)
	}
}

// TestQueueFull: past MaxQueuedJobs a submit fails with ErrQueueFull and the accepted job is
// untouched; once it ends there is room again.
func TestQueueFull(t *testing.T) {
	fx := getFixture(t)
	e, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir, MaxQueuedJobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.LoadSRS(context.Background(), fx.Sector.proof(t), ""); err != nil {
		t.Fatal(err)
	}
	req := cuzk.C2Request{C1: fx.Sector.c1(t), Sector: abi.SectorNumber(fx.Sector.SectorID), ProverID: fx.Sector.ProverID}
	first, err := e.SubmitC2(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SubmitC2(context.Background(), req); !errors.Is(err, cuzk.ErrQueueFull) {
		t.Fatalf("second submit past MaxQueuedJobs 1: %v, want ErrQueueFull", err)
	}
	if st, _, err := first.Poll(); err != nil || (st != cuzk.JobQueued && st != cuzk.JobRunning) {
		t.Fatalf("the accepted job after a refusal: %v %v", st, err)
	}
	if _, err := first.Cancel(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := e.SubmitC2(context.Background(), req)
		if err == nil {
			j.Cancel()
			return
		}
		if !errors.Is(err, cuzk.ErrQueueFull) || time.Now().After(deadline) {
			t.Fatalf("submit after the job ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
