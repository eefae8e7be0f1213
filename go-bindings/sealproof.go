package cuzk

// #include <stdlib.h>
// #include "cuzk.h"
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/filecoin-project/go-state-types/abi"
)

// ParseSealProof parses a registered seal proof given as its rust-fil-proofs name
// ("StackedDrg32GiBV1_1") or its number ("8").
func ParseSealProof(s string) (abi.RegisteredSealProof, error) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	var n C.int64_t
	var cerr *C.cuzk_error
	if st := C.cuzk_registered_proof_parse(cs, &n, &cerr); st != C.CUZK_STATUS_OK {
		return -1, takeError(st, cerr)
	}
	return abi.RegisteredSealProof(n), nil
}

// SealProofName is the rust-fil-proofs name of a registered seal proof ("StackedDrg2KiBV1_1"),
// or "" for numbers the library does not know.
func SealProofName(p abi.RegisteredSealProof) string {
	if name := C.cuzk_registered_proof_name(C.int64_t(p)); name != nil {
		return C.GoString(name)
	}
	return ""
}

// SealProofOfC1 reads the registered seal proof a C1 output was made for (its top-level
// "registered_proof"), e.g. to pick the SRS to load before SubmitC2.
func SealProofOfC1(c1 []byte) (abi.RegisteredSealProof, error) {
	if len(c1) == 0 {
		return -1, errf(CodeInvalidInput, "C1 output is empty")
	}
	var n C.int64_t
	var cerr *C.cuzk_error
	st := C.cuzk_c1_registered_proof((*C.uint8_t)(unsafe.Pointer(&c1[0])), C.size_t(len(c1)), &n, &cerr)
	runtime.KeepAlive(c1)
	if st != C.CUZK_STATUS_OK {
		return -1, takeError(st, cerr)
	}
	return abi.RegisteredSealProof(n), nil
}
