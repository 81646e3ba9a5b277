// Command pause is the process of the test node's sandbox image (test/cluster/real/node/images.ts):
// it holds the pod's namespaces, does nothing, reaps any child it inherits (it is PID 1 of the pod
// when the pod shares its process namespace), and exits 0 on SIGTERM or SIGINT. Built static.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
