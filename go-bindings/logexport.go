package cuzk

// This file holds the one //export of the package: cgo then allows only declarations in its
// preamble, so the C side that takes the function's address lives in logging.go.

/*
#include <stdlib.h>
*/
import "C"

import "unsafe"

//export cuzkGoLog
func cuzkGoLog(level C.int, target *C.char, message *C.char, _ unsafe.Pointer) {
	fn := logFunc.Load()
	if fn == nil {
		return
	}
	(*fn)(LogLevel(level), C.GoString(target), C.GoString(message))
}
