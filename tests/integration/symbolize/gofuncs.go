// A Go program for the symbolize tests: a loop in a function of its own
// and a small function the compiler inlines into main.
package main

import (
	"fmt"
	"os"
)

//go:noinline
func sumSquares(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func plusOne(n int) int { return sumSquares(n) + 1 }

func main() {
	fmt.Println(plusOne(len(os.Args) * 1000))
}
