package cuzk_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	cuzk "github.com/cuzk/cuzk/go-bindings"
)

// TestLogFunc: libcuzk's records reach a Go function (and through SlogFunc a *slog.Logger),
// job records name the job's kind, proof type, sector and request id, and nil restores stderr.
func TestLogFunc(t *testing.T) {
	fx := getFixture(t)
	var mu sync.Mutex
	var lines []string
	var slogOut bytes.Buffer
	toSlog := cuzk.SlogFunc(slog.New(slog.NewTextHandler(&slogOut, &slog.HandlerOptions{Level: slog.LevelDebug})))
	err := cuzk.SetLogFunc(func(level cuzk.LogLevel, target, message string) {
		mu.Lock()
		lines = append(lines, level.String()+" "+target+" "+message)
		toSlog(level, target, message)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cuzk.SetLogFilter("warn,cuzk=info"); err != nil { // other tests turn it down
		t.Fatal(err)
	}
	defer func() {
		if err := cuzk.SetLogFunc(nil); err != nil {
			t.Error(err)
		}
	}()

	eng, err := cuzk.New(cuzk.Config{ParamsDir: fx.ParamsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.LoadSRS(context.Background(), fx.Sector.proof(t), ""); err != nil {
		t.Fatal(err)
	}
	job, err := eng.SubmitC2(context.Background(), cuzk.C2Request{
		C1: fx.Sector.c1(t), Sector: abi.SectorNumber(fx.Sector.SectorID), ProverID: fx.Sector.ProverID, RequestID: "log-test-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Cancel(); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	all := strings.Join(lines, "\n")
	mu.Unlock()
	label := `(porep StackedDrg2KiBV1_1, sector ` + strconv.FormatUint(fx.Sector.SectorID, 10) + `, request "log-test-1")`
	for _, want := range []string{"info cuzk::engine cuzk engine started", "loaded SRS for StackedDrg2KiBV1_1", label + ": queued", label + ": cancelled"} {
		if !strings.Contains(all, want) {
			t.Errorf("no log record containing %q; got:\n%s", want, all)
		}
	}
	if !strings.Contains(slogOut.String(), "level=INFO") || !strings.Contains(slogOut.String(), "target=cuzk::engine") {
		t.Errorf("SlogFunc wrote:\n%s", slogOut.String())
	}
}
