// SPDX-License-Identifier: BSD-2-Clause
//
// gopark: goroutines that park all the time, for the Go unwinding test
// (issue 37). Eight relays hand a value around a ring of unbuffered
// channels, so every hand-off parks a goroutine: gopark -> runtime.mcall,
// which switches to the thread's g0 stack and calls runtime.park_m there,
// which schedules (and often sleeps in futex). A walk from g0 crosses
// mcall's switch back to the parked goroutine:
//
//	runtime.goexit -> main.main.func1 -> main.relay -> runtime.chanrecv ...
//	  -> runtime.mcall -> runtime.park_m -> runtime.schedule -> ...
//
// Prints "gopark: truth pid P" on stdout.
//
// Usage: gopark SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func relay(in <-chan uint64, out chan<- uint64) {
	for v := range in {
		for i := 0; i < 200; i++ {
			v = v*6364136223846793005 + 1442695040888963407
		}
		out <- v
	}
}

func main() {
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gopark SECONDS")
		os.Exit(2)
	}
	fmt.Printf("gopark: truth pid %d\n", os.Getpid())
	const relays = 8
	ring := make([]chan uint64, relays+1)
	for i := range ring {
		ring[i] = make(chan uint64)
	}
	for i := 0; i < relays; i++ {
		go relay(ring[i], ring[i+1])
	}
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(deadline) {
		ring[0] <- sink
		sink ^= <-ring[relays]
	}
}
