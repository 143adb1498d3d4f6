// SPDX-License-Identifier: Apache-2.0

// target is a scrape target for profd's tests: a Go program serving
// net/http/pprof on a loopback port, busy with labeled CPU work, mutex and
// channel contention, and allocations, so every profile type has samples.
// It also serves fgprof's wall-clock profile on /debug/fgprof.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/felixge/fgprof"
)

var sink [][]byte

//go:noinline
func burn(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	return x
}

func labeledWork(tenant string) {
	pprof.Do(context.Background(), pprof.Labels("tenant", tenant, "route", "/"+tenant), func(context.Context) {
		for {
			burn(2000000)
			time.Sleep(time.Millisecond)
		}
	})
}

func contend() {
	var mu sync.Mutex
	for i := 0; i < 4; i++ {
		go func() {
			for {
				mu.Lock()
				time.Sleep(100 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
}

func block() {
	ch := make(chan int)
	go func() {
		for {
			time.Sleep(200 * time.Microsecond)
			ch <- 1
		}
	}()
	go func() {
		for range ch {
		}
	}()
}

func allocate() {
	for {
		sink = append(sink, make([]byte, 4096))
		if len(sink) > 2000 {
			sink = sink[:0]
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go labeledWork("a")
	go labeledWork("b")
	contend()
	block()
	go allocate()
	http.Handle("/debug/fgprof", fgprof.Handler())
	fmt.Printf("listening on %s\n", ln.Addr())
	os.Stdout.Sync()
	http.Serve(ln, nil)
}
