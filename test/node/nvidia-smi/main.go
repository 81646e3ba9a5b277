// Command nvidia-smi is the test node's stand-in for NVIDIA's nvidia-smi: `nvidia-smi -q -x` prints
// the recorded XML of an 8×H100 node (test/fixtures/bin/h100/nvidia-smi.xml, embedded at build time
// through go build -overlay, see test/node/build.ts); any other arguments are refused, as the
// fixture's shell fake refuses them. Built static, so it runs in any container it is mounted into.
package main

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
)

//go:embed nvidia-smi.xml
var recorded []byte

func main() {
	if len(os.Args) < 3 || os.Args[1] != "-q" || os.Args[2] != "-x" {
		fmt.Fprintf(os.Stderr, "nvidia-smi stand-in: only '-q -x' is recorded (got: %s)\n", strings.Join(os.Args[1:], " "))
		os.Exit(2)
	}
	os.Stdout.Write(recorded)
}
