package cuzk

// Test hooks for the external tests in package cuzk_test.

// LiveEngines is the number of native engines not yet freed.
func LiveEngines() int64 { return liveEngines.Load() }

// JobWithID returns a handle for an arbitrary job id (to test unknown ids).
func JobWithID(e *Engine, id uint64) *Job { return &Job{e: e, id: id} }

// CheckABI exposes the ABI version comparison New makes.
func CheckABI(lib, header uint32) error { return checkABI(lib, header) }

// ConfigJSON is the JSON New passes to cuzk_engine_new.
func ConfigJSON(c Config) (string, error) {
	b, err := c.marshal()
	return string(b), err
}
