// Command ticker is the test node's workload image (test/cluster/real/node/images.ts): it prints
// "tick <i>" to stdout (or stderr) -n times, -every apart, then exits with -exit. On SIGTERM it says
// so and exits 143, unless -ignore-term (then only SIGKILL ends it). Built static.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5, "ticks to print (0: until stopped)")
	every := flag.Duration("every", 200*time.Millisecond, "time between ticks")
	exit := flag.Int("exit", 0, "exit status after the last tick")
	toStderr := flag.Bool("stderr", false, "print to stderr")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	flag.Parse()
	out := os.Stdout
	if *toStderr {
		out = os.Stderr
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	t := time.NewTicker(*every)
	defer t.Stop()
	for i := 1; *n == 0 || i <= *n; i++ {
		fmt.Fprintf(out, "tick %d\n", i)
		if *n != 0 && i == *n {
			break
		}
		select {
		case <-t.C:
		case s := <-sig:
			if *ignoreTerm && s == syscall.SIGTERM {
				fmt.Fprintln(out, "ignoring SIGTERM")
				continue
			}
			fmt.Fprintf(out, "got %v\n", s)
			os.Exit(143)
		}
	}
	os.Exit(*exit)
}
