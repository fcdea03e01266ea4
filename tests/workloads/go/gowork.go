// SPDX-License-Identifier: BSD-2-Clause
//
// gowork: a Go program hot in assembly, for the Go unwinding test (issue
// 26). crypto/sha256's block function is hand-written assembly that uses
// BP as a general register, so the frame-pointer chain is broken wherever
// it runs; only .gopclntab's pcsp unwinds it. Two goroutines burn:
//
//	main goroutine: runtime.main -> main.main -> main.worker -> main.middle
//	                -> main.leaf -> crypto/sha256.Sum256 -> ... -> block
//	second:         runtime.goexit -> main.spinner -> main.leaf -> ... -> block
//
// Prints "gowork: truth pid P" on stdout.
//
// Usage: gowork SECONDS
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink [2]byte

//go:noinline
func leaf(buf []byte) byte {
	s := sha256.Sum256(buf)
	return s[0]
}

//go:noinline
func middle(buf []byte, n int) byte {
	var x byte
	for i := 0; i < n; i++ {
		x ^= leaf(buf)
	}
	return x
}

//go:noinline
func worker(deadline time.Time) {
	buf := make([]byte, 64*1024)
	for time.Now().Before(deadline) {
		sink[0] ^= middle(buf, 8)
	}
}

//go:noinline
func spinner(deadline time.Time, done chan<- struct{}) {
	buf := make([]byte, 64*1024)
	for time.Now().Before(deadline) {
		for i := 0; i < 8; i++ {
			sink[1] ^= leaf(buf)
		}
	}
	close(done)
}

func main() {
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gowork SECONDS")
		os.Exit(2)
	}
	fmt.Printf("gowork: truth pid %d\n", os.Getpid())
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan struct{})
	go spinner(deadline, done)
	worker(deadline)
	<-done
}
