// SPDX-License-Identifier: BSD-2-Clause
//
// gocgo: Go calling C and C calling back into Go, for the Go unwinding
// test (issue 26). main.worker calls c_outer (C, on the system stack),
// which burns in c_burn and then calls back goCallback (Go, on the
// goroutine's stack again), which burns in crypto/sha256:
//
//	runtime.main -> main.main -> main.worker -> main._Cfunc_c_outer
//	  -> runtime.cgocall -> runtime.asmcgocall -> c_outer -> c_burn
//	  -> (c_outer -> crosscall2 -> runtime.cgocallback ...) -> main.goCallback
//
// Prints "gocgo: truth pid P" on stdout.
//
// Usage: gocgo SECONDS
package main

/*
#include <stdint.h>
extern uint64_t goCallback(uint64_t);
static uint64_t c_burn(uint64_t n)
{
	volatile uint64_t x = n;
	for (uint64_t i = 0; i < 1000000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}
static uint64_t c_outer(uint64_t n)
{
	uint64_t r = c_burn(n);
	return r ^ goCallback(r);
}
*/
import "C"

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//export goCallback
func goCallback(n C.uint64_t) C.uint64_t {
	buf := make([]byte, 256*1024)
	buf[0] = byte(n)
	s := sha256.Sum256(buf)
	return C.uint64_t(s[0])
}

//go:noinline
func worker(deadline time.Time) {
	for time.Now().Before(deadline) {
		sink ^= uint64(C.c_outer(C.uint64_t(sink)))
	}
}

func main() {
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gocgo SECONDS")
		os.Exit(2)
	}
	fmt.Printf("gocgo: truth pid %d\n", os.Getpid())
	worker(time.Now().Add(time.Duration(secs * float64(time.Second))))
}
