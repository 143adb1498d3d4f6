// SPDX-License-Identifier: Apache-2.0

// Command relabel_go answers, with Go's regexp as Prometheus uses it, what a
// relabel rule's regex does to a value: the unit tests compare profd's
// engine with it. Each input line is three hex strings ("-" for an empty
// one) separated by spaces: the regex, the value and the replacement. Each output line is "C" when
// the regex does not compile, "N" when it does not match the value, or "M"
// and the hex of the replacement expanded from the match.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		var parts [3][]byte
		for i := range parts {
			if i < len(fields) && fields[i] != "-" {
				b, err := hex.DecodeString(fields[i])
				if err != nil {
					fmt.Fprintln(os.Stderr, "relabel_go: not hex:", fields[i])
					os.Exit(2)
				}
				parts[i] = b
			}
		}
		// Prometheus anchors a relabel regex this way (model/relabel).
		re, err := regexp.Compile("^(?s:" + string(parts[0]) + ")$")
		if err != nil {
			fmt.Fprintln(out, "C")
			continue
		}
		value := string(parts[1])
		match := re.FindStringSubmatchIndex(value)
		if match == nil {
			fmt.Fprintln(out, "N")
			continue
		}
		expanded := re.ExpandString(nil, string(parts[2]), value, match)
		fmt.Fprintln(out, "M", hex.EncodeToString(expanded))
	}
}
