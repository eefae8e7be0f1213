package cuzk

// #include "cuzk.h"
import "C"

import (
	"runtime"
	"strconv"
	"unsafe"

	"github.com/filecoin-project/go-state-types/abi"
)

// sealProofNames are the names rust-fil-proofs writes into C1 outputs, by filecoin-ffi /
// go-state-types number (the index).
var sealProofNames = [...]string{
	"StackedDrg2KiBV1",
	"StackedDrg8MiBV1",
	"StackedDrg512MiBV1",
	"StackedDrg32GiBV1",
	"StackedDrg64GiBV1",
	"StackedDrg2KiBV1_1",
	"StackedDrg8MiBV1_1",
	"StackedDrg512MiBV1_1",
	"StackedDrg32GiBV1_1",
	"StackedDrg64GiBV1_1",
	"StackedDrg2KiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg8MiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg512MiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg32GiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg64GiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg8MiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg512MiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg32GiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg64GiBV1_2_Feat_NonInteractivePoRep",
}

// ParseSealProof parses a registered seal proof given as its rust-fil-proofs name
// ("StackedDrg32GiBV1_1") or its number ("8").
func ParseSealProof(s string) (abi.RegisteredSealProof, error) {
	for i, n := range sealProofNames {
		if n == s {
			return abi.RegisteredSealProof(i), nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < int64(len(sealProofNames)) {
		return abi.RegisteredSealProof(n), nil
	}
	return -1, errf(StatusInvalidArgument, "unknown registered seal proof %q", s)
}

// SealProofOfC1 reads the registered seal proof a C1 output was made for (its top-level
// "registered_proof"), e.g. to pick the SRS to load before SubmitC2.
func SealProofOfC1(c1 []byte) (abi.RegisteredSealProof, error) {
	if len(c1) == 0 {
		return -1, errf(StatusInvalidInput, "C1 output is empty")
	}
	var n C.int64_t
	var cerr *C.cuzk_error
	st := C.cuzk_c1_registered_proof((*C.uint8_t)(unsafe.Pointer(&c1[0])), C.uintptr_t(len(c1)), &n, &cerr)
	runtime.KeepAlive(c1)
	if st != C.CUZK_STATUS_OK {
		return -1, takeError(st, cerr)
	}
	return abi.RegisteredSealProof(n), nil
}
