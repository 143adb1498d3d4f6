// SPDX-License-Identifier: Apache-2.0

// Command relabel_go answers, with Go's regexp and strings as Prometheus
// uses them, what a relabel rule does to a value: the unit tests compare
// profd's engine with it. Each input line is an action (replace,
// lowercase or uppercase) and three hex strings ("-" for an empty one), all
// separated by spaces: the regex, the value and the replacement. Each
// output line is "C" when the regex does not compile, "N" when it does not
// match the value, or "M" and the hex of the result: the replacement
// expanded from the match, or the value in lower or upper case.
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
		if len(fields) != 4 {
			fmt.Fprintln(os.Stderr, "relabel_go: want 4 fields:", in.Text())
			os.Exit(2)
		}
		var parts [3]string
		for i := range parts {
			if fields[i+1] != "-" {
				b, err := hex.DecodeString(fields[i+1])
				if err != nil {
					fmt.Fprintln(os.Stderr, "relabel_go: not hex:", fields[i+1])
					os.Exit(2)
				}
				parts[i] = string(b)
			}
		}
		fmt.Fprintln(out, answer(fields[0], parts[0], parts[1], parts[2]))
	}
}

func answer(action, regex, value, replacement string) string {
	// Prometheus anchors a relabel regex this way (model/relabel).
	re, err := regexp.Compile("^(?s:" + regex + ")$")
	if err != nil {
		return "C"
	}
	match := re.FindStringSubmatchIndex(value)
	switch {
	case action == "lowercase":
		return "M " + hex.EncodeToString([]byte(strings.ToLower(value)))
	case action == "uppercase":
		return "M " + hex.EncodeToString([]byte(strings.ToUpper(value)))
	case match == nil:
		return "N"
	default:
		return "M " + hex.EncodeToString(re.ExpandString(nil, replacement, value, match))
	}
}
