package cuzk

import (
	"encoding/json"
	"net/http"
)

// Status is the engine's state (what StatusJSON returns, typed). Byte counts are bytes,
// durations seconds, as the library writes them; fields the library adds later are in
// StatusJSON until they are added here.
type Status struct {
	Version          string          `json:"version"`
	ABIVersion       uint32          `json:"abi_version"`
	Backend          string          `json:"backend"`
	Devices          []DeviceStatus  `json:"devices"`
	ProverLanes      []LaneStatus    `json:"prover_lanes"`
	UptimeSeconds    float64         `json:"uptime_s"`
	SynthesisWorkers int             `json:"synthesis_workers"`
	QueuedPartitions int             `json:"queued_partitions"`
	AwaitingProver   int             `json:"partitions_awaiting_prover"`
	Jobs             JobCounts       `json:"jobs"`
	UnfinishedByKind map[string]int  `json:"unfinished_jobs_by_kind"`
	Queue            QueueStatus     `json:"queue"`
	Totals           JobTotals       `json:"totals"`
	SRS              []SRSInfo       `json:"srs"`
	Memory           MemoryStatus    `json:"memory"`
	Dealloc          DeallocStatus   `json:"dealloc"`
	Circuits         json.RawMessage `json:"circuits"`
}

// DeviceStatus is one CUDA device as the engine uses it.
type DeviceStatus struct {
	Index           int     `json:"index"`
	Name            string  `json:"name"`
	TotalBytes      uint64  `json:"total_bytes"`
	FreeBytes       *uint64 `json:"free_bytes"`
	VRAMBudgetBytes *uint64 `json:"vram_budget_bytes"`
	PinnedHostBytes *uint64 `json:"pinned_host_bytes"`
	Usable          bool    `json:"usable"`
	Error           *string `json:"error"`
	Proofs          uint64  `json:"proofs"`
	Failures        uint64  `json:"failures"`
	SharedPasses    uint64  `json:"shared_passes"`
	PCIeH2DBytes    uint64  `json:"pcie_h2d_bytes"`
	PCIeD2HBytes    uint64  `json:"pcie_d2h_bytes"`
	PCIeBusySeconds float64 `json:"pcie_busy_s"`
	Lanes           int     `json:"lanes"`
	BusySeconds     float64 `json:"busy_s"`
	BusyFraction    float64 `json:"busy_fraction"`
}

// LaneStatus is one prover lane (a partition in flight on a device, or on the CPU).
type LaneStatus struct {
	Lane         int     `json:"lane"`
	BusySeconds  float64 `json:"busy_s"`
	BusyFraction float64 `json:"busy_fraction"`
	Partitions   uint64  `json:"partitions"`
	Failures     uint64  `json:"failures"`
	Proving      bool    `json:"proving"`
}

// JobCounts are the jobs the engine remembers now, by state (ended ones until their TTL).
type JobCounts struct {
	Queued    uint64 `json:"queued"`
	Running   uint64 `json:"running"`
	Done      uint64 `json:"done"`
	Failed    uint64 `json:"failed"`
	Cancelled uint64 `json:"cancelled"`
}

// JobTotals count jobs since the engine started.
type JobTotals struct {
	Submitted uint64 `json:"submitted"`
	Done      uint64 `json:"done"`
	Failed    uint64 `json:"failed"`
	Cancelled uint64 `json:"cancelled"`
}

// QueueStatus is the accepted, unfinished work and its bounds (Config.MaxQueuedJobs, ...).
type QueueStatus struct {
	Jobs          uint64 `json:"jobs"`
	InputBytes    uint64 `json:"input_bytes"`
	MaxJobs       uint64 `json:"max_jobs"`
	MaxInputBytes uint64 `json:"max_input_bytes"`
	Refused       uint64 `json:"refused"`
}

// SRSInfo is one resident SRS.
type SRSInfo struct {
	RegisteredProof string  `json:"registered_proof"`
	Kind            string  `json:"kind"`
	Path            string  `json:"path"`
	FileBytes       uint64  `json:"file_bytes"`
	ResidentBytes   uint64  `json:"resident_bytes"`
	LoadSeconds     float64 `json:"load_s"`
	Validation      string  `json:"validation"`
	FromCache       bool    `json:"from_cache"`
}

// MemoryStatus is the host memory budget of synthesized partitions.
type MemoryStatus struct {
	BudgetBytes       uint64 `json:"budget_bytes"`
	BudgetSource      string `json:"budget_source"`
	ReservedBytes     uint64 `json:"reserved_bytes"`
	PeakReservedBytes uint64 `json:"peak_reserved_bytes"`
	PartitionsHolding uint64 `json:"partitions_holding"`
	SynthesisWaiting  uint64 `json:"synthesis_waiting"`
}

// DeallocStatus is the deallocator thread's work.
type DeallocStatus struct {
	PendingBytes uint64  `json:"pending_bytes"`
	FreedBytes   uint64  `json:"freed_bytes"`
	FreeSeconds  float64 `json:"free_s"`
}

// Status is the engine's state, typed.
func (e *Engine) Status() (*Status, error) {
	raw, err := e.StatusJSON()
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// MetricsHandler serves the engine's metrics in the Prometheus text format (mount it at
// /metrics); an engine that is closed answers 503.
func (e *Engine) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		text, err := e.Metrics()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(text))
	})
}
