package client

// A Curio-shaped client against the real cuzk-daemon: it dials, wraps the C1 output and fills
// every request exactly as Curio's lib/cuzk/client.go and lib/ffi/cuzk_funcs.go do, and drives
// every method. The proofs it gets are written to $CUZK_DAEMON_OUT; daemon/tests/curio_client.rs
// (which runs this) verifies each with filecoin-proofs.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	commcid "github.com/filecoin-project/go-fil-commcid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk/cuzk/daemon/tests/client/cuzkv1"
)

// What the harness hands over: the 2 KiB fixtures' requests (bytes as base64, Go's JSON form).
type cases struct {
	ParamsDir string `json:"params_dir"`
	PoRep     struct {
		C1              []byte `json:"c1"`
		SectorNumber    uint64 `json:"sector_number"`
		MinerID         uint64 `json:"miner_id"`
		RegisteredProof uint64 `json:"registered_proof"`
		SectorSize      uint64 `json:"sector_size"`
	} `json:"porep"`
	Winning postCase `json:"winning"`
	Window  postCase `json:"window"`
	Snap    struct {
		RegisteredProof uint64   `json:"registered_proof"`
		SectorSize      uint64   `json:"sector_size"`
		VanillaProofs   [][]byte `json:"vanilla_proofs"`
		CommROld        []byte   `json:"comm_r_old"`
		CommRNew        []byte   `json:"comm_r_new"`
		CommDNew        []byte   `json:"comm_d_new"`
	} `json:"snap"`
}

type postCase struct {
	RegisteredProof uint64 `json:"registered_proof"`
	SectorSize      uint64 `json:"sector_size"`
	MinerID         uint64 `json:"miner_id"`
	Randomness      []byte `json:"randomness"`
	// Winning: one list; window: one list per partition.
	Partitions [][][]byte `json:"partitions"`
}

var (
	in  cases
	out string
	bin string
)

func TestMain(m *testing.M) {
	bin, out = os.Getenv("CUZK_DAEMON_BIN"), os.Getenv("CUZK_DAEMON_OUT")
	path := os.Getenv("CUZK_DAEMON_CASES")
	if bin == "" || out == "" || path == "" {
		fmt.Fprintln(os.Stderr, "run through daemon/tests/curio_client.rs (CUZK_DAEMON_BIN, CUZK_DAEMON_CASES, CUZK_DAEMON_OUT unset)")
		os.Exit(2)
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cases:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

type daemon struct {
	cmd     *exec.Cmd
	sock    string
	metrics string
	conn    *grpc.ClientConn
	cli     pb.ProvingEngineClient
	exited  chan error
}

// startDaemon runs cuzk-daemon on a socket in a temp dir with `top` and `engine` TOML lines
// added, and connects to it the way Curio's client does.
func startDaemon(t *testing.T, top, engine string) *daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "cuzkd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := l.Addr().String()
	l.Close()
	d := &daemon{sock: filepath.Join(dir, "run", "cuzk.sock"), metrics: metrics, exited: make(chan error, 1)}
	cfg := fmt.Sprintf("listen_unix = %q\nmetrics_listen = %q\ndrain_grace_secs = 300\n%s\n[engine]\nbackend = \"cpu\"\nparams_dir = %q\n%s\n",
		d.sock, metrics, top, in.ParamsDir, engine)
	cfgPath := filepath.Join(dir, "cuzk-daemon.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	check := exec.Command(bin, "--config", cfgPath, "--check-config")
	if b, err := check.CombinedOutput(); err != nil {
		t.Fatalf("--check-config: %v: %s", err, b)
	}
	logf, err := os.Create(filepath.Join(out, fmt.Sprintf("daemon-%s.log", strings.ReplaceAll(t.Name(), "/", "-"))))
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(bin, "--config", cfgPath)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	d.cmd.Env = append(os.Environ(), "RUST_LOG=info")
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			<-d.exited
		}
	})
	// Curio: grpc.NewClient(target, insecure, 256 MiB each way); "unix:///abs/path" for a socket.
	d.conn, err = grpc.NewClient("unix://"+d.sock,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.conn.Close() })
	d.cli = pb.NewProvingEngineClient(d.conn)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := d.cli.GetStatus(ctx, &pb.GetStatusRequest{})
		cancel()
		if err == nil {
			return d
		}
		select {
		case e := <-d.exited:
			t.Fatalf("cuzk-daemon exited at start: %v (log in %s)", e, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cuzk-daemon does not answer on %s: %v", d.sock, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return c
}

// Curio's c1OutputWrapper (lib/ffi/cuzk_funcs.go).
type c1OutputWrapper struct {
	SectorNum  int64  `json:"SectorNum"`
	Phase1Out  []byte `json:"Phase1Out"`
	SectorSize uint64 `json:"SectorSize"`
}

// porepRequest as PoRepSnarkCuzk fills it.
func porepRequest(t *testing.T, id string) *pb.SubmitProofRequest {
	p := in.PoRep
	wrapped, err := json.Marshal(c1OutputWrapper{SectorNum: int64(p.SectorNumber), Phase1Out: p.C1, SectorSize: p.SectorSize})
	if err != nil {
		t.Fatal(err)
	}
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: p.SectorSize, RegisteredProof: p.RegisteredProof,
		Priority: pb.Priority_NORMAL, VanillaProof: wrapped, SectorNumber: p.SectorNumber, MinerId: p.MinerID,
	}
}

func winningRequest(id string) *pb.SubmitProofRequest {
	w := in.Winning
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_WINNING_POST, SectorSize: w.SectorSize, RegisteredProof: w.RegisteredProof,
		Priority: pb.Priority_CRITICAL, VanillaProofs: w.Partitions[0], MinerId: w.MinerID, Randomness: w.Randomness,
	}
}

func windowRequest(part int) *pb.SubmitProofRequest {
	w := in.Window
	return &pb.SubmitProofRequest{
		// Curio formats the randomness bytes with %d: "wdpost-1000-0-[12 34 ...]".
		RequestId: fmt.Sprintf("wdpost-%d-%d-%d", w.MinerID, part, w.Randomness[:8]), ProofKind: pb.ProofKind_WINDOW_POST_PARTITION,
		SectorSize: w.SectorSize, RegisteredProof: w.RegisteredProof, Priority: pb.Priority_HIGH, VanillaProofs: w.Partitions[part],
		MinerId: w.MinerID, Randomness: w.Randomness, PartitionIndex: uint32(part),
	}
}

func snapRequest(id string, asCIDs bool) *pb.SubmitProofRequest {
	s := in.Snap
	r := &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_SNAP_DEALS_UPDATE, SectorSize: s.SectorSize, RegisteredProof: s.RegisteredProof,
		Priority: pb.Priority_NORMAL, VanillaProofs: s.VanillaProofs, CommROld: s.CommROld, CommRNew: s.CommRNew, CommDNew: s.CommDNew,
	}
	if asCIDs {
		for _, c := range []struct {
			dst  *[]byte
			comm []byte
			cid  func([]byte) (interface{ Bytes() []byte }, error)
		}{
			{&r.CommROld, s.CommROld, sealedCID}, {&r.CommRNew, s.CommRNew, sealedCID}, {&r.CommDNew, s.CommDNew, unsealedCID},
		} {
			id, err := c.cid(c.comm)
			if err != nil {
				panic(err)
			}
			*c.dst = id.Bytes()
		}
	}
	return r
}

func sealedCID(c []byte) (interface{ Bytes() []byte }, error) {
	return commcid.ReplicaCommitmentV1ToCID(c)
}
func unsealedCID(c []byte) (interface{ Bytes() []byte }, error) {
	return commcid.DataCommitmentV1ToCID(c)
}

// prove is Curio's Client.Prove: COMPLETED or an error.
func prove(c context.Context, cli pb.ProvingEngineClient, req *pb.SubmitProofRequest) (*pb.AwaitProofResponse, error) {
	resp, err := cli.Prove(c, &pb.ProveRequest{Submit: req})
	if err != nil {
		return nil, err
	}
	r := resp.GetResult()
	if r == nil {
		return nil, fmt.Errorf("cuzk returned nil result")
	}
	if r.Status != pb.AwaitProofResponse_COMPLETED {
		return r, fmt.Errorf("cuzk proof %s: %s", r.Status, r.ErrorMessage)
	}
	return r, nil
}

func save(t *testing.T, name string, proof []byte) {
	t.Helper()
	if len(proof) == 0 || len(proof)%192 != 0 {
		t.Fatalf("%s: a proof of %d bytes (192 per partition expected)", name, len(proof))
	}
	if err := os.WriteFile(filepath.Join(out, name+".proof"), proof, 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, what string, err error, want codes.Code, substr string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != want || !strings.Contains(st.Message(), substr) {
		t.Fatalf("%s: want %s containing %q, got %v", what, want, substr, err)
	}
}

// capacity is Curio's HasCapacity: maxPending less pending + in-progress over every queue.
func capacity(t *testing.T, cli pb.ProvingEngineClient, maxPending int) int {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := cli.GetStatus(c, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, q := range st.Queues {
		total += int(q.Pending + q.InProgress)
	}
	return maxPending - total
}

var cancelledRe = regexp.MustCompile(`cuzk_jobs_finished_total\{kind="porep",outcome="cancelled"\} (\d+)`)

func cancelledPoRep(t *testing.T, cli pb.ProvingEngineClient) int {
	m, err := cli.GetMetrics(ctx(t), &pb.GetMetricsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	g := cancelledRe.FindStringSubmatch(m.PrometheusText)
	if g == nil {
		t.Fatalf("no porep cancelled counter in the metrics:\n%s", m.PrometheusText)
	}
	n, _ := strconv.Atoi(g[1])
	return n
}

// rawCodec sends bytes as they are: a malformed protobuf message on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)   { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error { *(v.(*[]byte)) = b; return nil }
func (rawCodec) Name() string                    { return "proto" }

var _ encoding.Codec = rawCodec{}

func TestCurioClient(t *testing.T) {
	d := startDaemon(t, "", "")
	cli := d.cli

	t.Run("status_and_capacity", func(t *testing.T) {
		st, err := cli.GetStatus(ctx(t), &pb.GetStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, q := range st.Queues {
			kinds[q.ProofKind] = true
		}
		for _, k := range []string{"porep-c2", "snap-update", "window-post", "winning-post"} {
			if !kinds[k] {
				t.Fatalf("GetStatus has no %s queue: %v", k, st.Queues)
			}
		}
		if c := capacity(t, cli, 10); c != 10 {
			t.Fatalf("an idle daemon has capacity %d of 10", c)
		}
		if fi, err := os.Stat(d.sock); err != nil || fi.Mode().Perm() != 0o660 || fi.Mode()&os.ModeSocket == 0 {
			t.Fatalf("the socket %s: %v, mode %v (want a socket, 0660)", d.sock, err, fi.Mode())
		}
	})

	t.Run("preload_and_evict", func(t *testing.T) {
		r, err := cli.PreloadSRS(ctx(t), &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
		if err != nil || r.AlreadyLoaded {
			t.Fatalf("first PreloadSRS(winning-2k): %v %v", r, err)
		}
		if r, err = cli.PreloadSRS(ctx(t), &pb.PreloadSrsRequest{CircuitId: "winning-2k"}); err != nil || !r.AlreadyLoaded {
			t.Fatalf("second PreloadSRS(winning-2k): %v %v", r, err)
		}
		st, _ := cli.GetStatus(ctx(t), &pb.GetStatusRequest{})
		found := false
		for _, s := range st.LoadedSrs {
			found = found || (s.CircuitId == "winning-2k" && s.SizeBytes > 0)
		}
		if !found {
			t.Fatalf("winning-2k not in loaded_srs: %v", st.LoadedSrs)
		}
		e, err := cli.EvictSRS(ctx(t), &pb.EvictSrsRequest{CircuitId: "winning-2k"})
		if err != nil || !e.WasLoaded || e.FreedBytes == 0 {
			t.Fatalf("EvictSRS(winning-2k): %v %v", e, err)
		}
		if e, err = cli.EvictSRS(ctx(t), &pb.EvictSrsRequest{CircuitId: "winning-2k"}); err != nil || e.WasLoaded {
			t.Fatalf("second EvictSRS(winning-2k): %v %v", e, err)
		}
		_, err = cli.PreloadSRS(ctx(t), &pb.PreloadSrsRequest{CircuitId: "porep-33g"})
		wantCode(t, "PreloadSRS(porep-33g)", err, codes.InvalidArgument, "porep-33g")
		// The fixtures have no 32 GiB params: the error names the file it looked for.
		_, err = cli.PreloadSRS(ctx(t), &pb.PreloadSrsRequest{CircuitId: "porep-32g"})
		wantCode(t, "PreloadSRS(porep-32g)", err, codes.FailedPrecondition, "v28-stacked-proof-of-replication")
	})

	t.Run("porep_envelope", func(t *testing.T) {
		id := fmt.Sprintf("porep-%d-%d", in.PoRep.MinerID, in.PoRep.SectorNumber)
		r, err := prove(ctx(t), cli, porepRequest(t, id))
		if err != nil {
			t.Fatal(err)
		}
		if r.JobId != id || r.TotalMs == 0 {
			t.Fatalf("job id %q (want %q), total %d ms", r.JobId, id, r.TotalMs)
		}
		save(t, "porep-envelope", r.Proof)
		// Proving the same request again returns the same job's proof (idempotent).
		again, err := prove(ctx(t), cli, porepRequest(t, id))
		if err != nil || !bytes.Equal(again.Proof, r.Proof) {
			t.Fatalf("the same request id and content again: %v (same proof: %v)", err, again != nil && bytes.Equal(again.Proof, r.Proof))
		}
	})

	t.Run("porep_bare_c1", func(t *testing.T) {
		req := porepRequest(t, "")
		req.VanillaProof = in.PoRep.C1
		r, err := prove(ctx(t), cli, req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.JobId, "job-") {
			t.Fatalf("a request without id got job id %q", r.JobId)
		}
		save(t, "porep-bare", r.Proof)
	})

	t.Run("winning_post", func(t *testing.T) {
		r, err := prove(ctx(t), cli, winningRequest(fmt.Sprintf("winpost-%d-%x", in.Winning.MinerID, in.Winning.Randomness[:8])))
		if err != nil {
			t.Fatal(err)
		}
		save(t, "winning", r.Proof)
	})

	t.Run("window_post_partitions", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, len(in.Window.Partitions))
		for p := range in.Window.Partitions {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				r, err := prove(ctx(t), cli, windowRequest(p))
				if err == nil {
					save(t, fmt.Sprintf("window-%d", p), r.Proof)
				}
				errs[p] = err
			}(p)
		}
		wg.Wait()
		for p, err := range errs {
			if err != nil {
				t.Fatalf("partition %d: %v", p, err)
			}
		}
	})

	t.Run("snap_deals", func(t *testing.T) {
		r, err := prove(ctx(t), cli, snapRequest("snap-1000-7", false))
		if err != nil {
			t.Fatal(err)
		}
		save(t, "snap", r.Proof)
		r, err = prove(ctx(t), cli, snapRequest("snap-1000-7-cid", true))
		if err != nil {
			t.Fatal(err)
		}
		save(t, "snap-cid", r.Proof)
	})

	t.Run("submit_await_cancel", func(t *testing.T) {
		s, err := cli.SubmitProof(ctx(t), porepRequest(t, "porep-submit"))
		if err != nil || s.JobId != "porep-submit" {
			t.Fatalf("SubmitProof: %v %v", s, err)
		}
		c, err := cli.CancelProof(ctx(t), &pb.CancelProofRequest{JobId: "porep-submit"})
		if err != nil || !c.WasRunning {
			t.Fatalf("CancelProof: %v %v", c, err)
		}
		a, err := cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: "porep-submit"})
		if err != nil || a.Status != pb.AwaitProofResponse_CANCELLED {
			t.Fatalf("AwaitProof of a cancelled job: %v %v", a, err)
		}
		// A cancelled job released its id: the same request runs anew.
		if s, err = cli.SubmitProof(ctx(t), porepRequest(t, "porep-submit")); err != nil {
			t.Fatal(err)
		}
		a, err = cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: s.JobId, TimeoutMs: 1})
		if err != nil || a.Status != pb.AwaitProofResponse_TIMEOUT {
			t.Fatalf("AwaitProof with 1 ms: %v %v", a, err)
		}
		if a, err = cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: s.JobId}); err != nil || a.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("AwaitProof: %v %v", a, err)
		}
		save(t, "porep-submit", a.Proof)
	})

	t.Run("deadline_cancels_the_job", func(t *testing.T) {
		before := cancelledPoRep(t, cli)
		c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := prove(c, cli, porepRequest(t, "porep-deadline"))
		wantCode(t, "Prove past its deadline", err, codes.DeadlineExceeded, "")
		deadline := time.Now().Add(60 * time.Second)
		for cancelledPoRep(t, cli) != before+1 {
			if time.Now().After(deadline) {
				t.Fatalf("the job of a Prove whose deadline passed was not cancelled")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("bad_requests", func(t *testing.T) {
		_, err := cli.Prove(ctx(t), &pb.ProveRequest{})
		wantCode(t, "Prove without submit", err, codes.InvalidArgument, "submit")
		_, err = cli.SubmitProof(ctx(t), &pb.SubmitProofRequest{ProofKind: pb.ProofKind_PROOF_KIND_UNSPECIFIED})
		wantCode(t, "kind 0", err, codes.InvalidArgument, "proof_kind")
		_, err = cli.SubmitProof(ctx(t), &pb.SubmitProofRequest{ProofKind: 9})
		wantCode(t, "kind 9", err, codes.InvalidArgument, "proof_kind")
		bad := porepRequest(t, "porep-bad")
		bad.VanillaProof = []byte(`{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":7}`)
		_, err = cli.SubmitProof(ctx(t), bad)
		wantCode(t, "a malformed C1", err, codes.InvalidArgument, "")
		w := winningRequest("winpost-bad")
		w.Randomness = w.Randomness[:31]
		_, err = cli.SubmitProof(ctx(t), w)
		wantCode(t, "31 bytes of randomness", err, codes.InvalidArgument, "randomness")
		w = winningRequest("winpost-bad-proof")
		w.VanillaProofs = [][]byte{[]byte("not a vanilla proof")}
		_, err = cli.SubmitProof(ctx(t), w)
		wantCode(t, "a garbage vanilla proof", err, codes.InvalidArgument, "")
		s := snapRequest("snap-bad", false)
		s.CommDNew = append([]byte{1, 2, 3}, s.CommDNew...)
		_, err = cli.SubmitProof(ctx(t), s)
		wantCode(t, "a 35-byte commitment", err, codes.InvalidArgument, "comm_d_new")
		s = snapRequest("snap-bad-cid", true)
		s.CommDNew, s.CommROld = s.CommROld, s.CommDNew // a sealed CID where an unsealed one belongs
		_, err = cli.SubmitProof(ctx(t), s)
		wantCode(t, "a CID of the wrong kind", err, codes.InvalidArgument, "")
		_, err = cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: "no-such-job"})
		wantCode(t, "AwaitProof of an unknown job", err, codes.NotFound, "no-such-job")
		_, err = cli.CancelProof(ctx(t), &pb.CancelProofRequest{JobId: "no-such-job"})
		wantCode(t, "CancelProof of an unknown job", err, codes.NotFound, "no-such-job")
		// Bytes that are no protobuf message at all.
		var reply []byte
		garbage := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x12}
		err = d.conn.Invoke(ctx(t), "/cuzk.v1.ProvingEngine/Prove", &garbage, &reply, grpc.ForceCodec(rawCodec{}))
		if st, _ := status.FromError(err); err == nil || st.Code() == codes.Unavailable {
			t.Fatalf("a malformed message: %v", err)
		}
		if c := capacity(t, cli, 10); c != 10 {
			t.Fatalf("after the bad requests the daemon holds work: capacity %d", c)
		}
	})

	t.Run("concurrent_prove_64", func(t *testing.T) {
		const calls, ids = 64, 16
		var wg sync.WaitGroup
		proofs := make([][]byte, calls)
		errs := make([]error, calls)
		for i := 0; i < calls; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := prove(ctx(t), cli, winningRequest(fmt.Sprintf("winpost-concurrent-%d", i%ids)))
				if err == nil {
					proofs[i] = r.Proof
				}
				errs[i] = err
			}(i)
		}
		wg.Wait()
		for i := 0; i < calls; i++ {
			if errs[i] != nil {
				t.Fatalf("call %d: %v", i, errs[i])
			}
			// Calls with one request id share one job: one proof.
			if !bytes.Equal(proofs[i], proofs[i%ids]) {
				t.Fatalf("calls %d and %d share request id %d but got different proofs", i, i%ids, i%ids)
			}
		}
		for k := 0; k < ids; k++ {
			save(t, fmt.Sprintf("concurrent-%d", k), proofs[k])
		}
	})

	t.Run("metrics", func(t *testing.T) {
		m, err := cli.GetMetrics(ctx(t), &pb.GetMetricsRequest{})
		if err != nil || !strings.Contains(m.PrometheusText, "cuzk_jobs_finished_total") {
			t.Fatalf("GetMetrics: %v", err)
		}
		resp, err := http.Get("http://" + d.metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `cuzk_jobs_finished_total{kind="winning_post",outcome="done"}`) {
			t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
		}
		resp, err = http.Get("http://" + d.metrics + "/status")
		if err != nil {
			t.Fatal(err)
		}
		var st map[string]any
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || st["backend"] != "cpu" {
			t.Fatalf("GET /status: %v %v", err, st["backend"])
		}
	})

	t.Run("limits", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tcp := l.Addr().String()
		l.Close()
		small := startDaemon(t, fmt.Sprintf("max_message_mib = 1\nlisten_tcp = %q", tcp), "max_queued_jobs = 1")
		// Curio's target for a bare host:port: "dns:///" + addr.
		tc, err := grpc.NewClient("dns:///"+tcp, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		if _, err := pb.NewProvingEngineClient(tc).GetStatus(ctx(t), &pb.GetStatusRequest{}); err != nil {
			t.Fatalf("GetStatus over TCP %s: %v", tcp, err)
		}
		s, err := small.cli.SubmitProof(ctx(t), porepRequest(t, "porep-limits"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = small.cli.SubmitProof(ctx(t), winningRequest("winpost-limits"))
		wantCode(t, "a submit beyond max_queued_jobs", err, codes.ResourceExhausted, "max_queued_jobs")
		huge := porepRequest(t, "porep-huge")
		huge.VanillaProof = make([]byte, 2<<20)
		_, err = small.cli.SubmitProof(ctx(t), huge)
		if st, _ := status.FromError(err); err == nil || st.Code() == codes.Unavailable || st.Code() == codes.OK {
			t.Fatalf("a message over max_message_mib: %v", err)
		}
		if a, err := small.cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: s.JobId}); err != nil || a.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("the accepted job after the refusals: %v %v", a, err)
		}
		small.cmd.Process.Signal(syscall.SIGINT)
		if err := <-small.exited; err != nil {
			t.Fatalf("SIGINT on an idle daemon: %v", err)
		}
	})

	t.Run("sigterm_drains", func(t *testing.T) {
		s, err := cli.SubmitProof(ctx(t), porepRequest(t, "porep-drain"))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err = cli.SubmitProof(ctx(t), winningRequest("winpost-after-sigterm"))
			if st, _ := status.FromError(err); err != nil && st.Code() == codes.Unavailable {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("new proofs still accepted 30 s after SIGTERM: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		a, err := cli.AwaitProof(ctx(t), &pb.AwaitProofRequest{JobId: s.JobId})
		if err != nil || a.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("the job accepted before SIGTERM: %v %v", a, err)
		}
		save(t, "porep-drain", a.Proof)
		select {
		case err := <-d.exited:
			if err != nil {
				t.Fatalf("the drained daemon exited with %v", err)
			}
		case <-time.After(120 * time.Second):
			t.Fatal("the daemon did not exit after draining")
		}
		if _, err := os.Stat(d.sock); !os.IsNotExist(err) {
			t.Fatalf("the socket %s is left behind: %v", d.sock, err)
		}
	})
}
