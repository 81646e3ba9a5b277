// Command containerd is the real test node's multi-call binary (test/cluster/real/node): containerd
// 2.x, ctr, and the node supervisor, chosen by the name it runs under (ctr and aicr-node are links to
// it). The runc shim is a binary of its own (shim/): it loads every plugin registered in its process,
// and the daemon's would fail there.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containerd/containerd/v2/cmd/containerd/command"
	ctr "github.com/containerd/containerd/v2/cmd/ctr/app"

	_ "github.com/containerd/containerd/v2/cmd/containerd/builtins"
)

func main() {
	name := filepath.Base(os.Args[0])
	ctx := context.Background()
	switch name {
	case "containerd":
		if err := command.App().Run(ctx, os.Args); err != nil {
			fmt.Fprintln(os.Stderr, "containerd:", err)
			os.Exit(1)
		}
	case "ctr":
		if err := ctr.New().Run(ctx, os.Args); err != nil {
			fmt.Fprintln(os.Stderr, "ctr:", err)
			os.Exit(1)
		}
	case "aicr-node":
		if len(os.Args) < 2 {
			fmt.Fprintln(os.Stderr, "usage: aicr-node up|init|sweep|base-spec ...")
			os.Exit(2)
		}
		os.Exit(runNode(os.Args[1], os.Args[2:]))
	default:
		fmt.Fprintf(os.Stderr, "%s: run me as containerd, ctr or aicr-node\n", name)
		os.Exit(2)
	}
}
