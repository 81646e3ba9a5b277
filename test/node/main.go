// Command containerd-shim-runc-v2 is the real test node's multi-call binary (test/cluster/real/node):
// containerd 2.x, its runc shim, ctr, and the node supervisor, chosen by the name it runs under.
//
// The file itself is named containerd-shim-runc-v2 and the other names are symlinks to it, because
// the shim starts its long-lived copy through os.Executable(), which resolves links: that copy must
// still see the shim's name.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/manager"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/task/plugin"
	"github.com/containerd/containerd/v2/cmd/containerd/command"
	ctr "github.com/containerd/containerd/v2/cmd/ctr/app"
	"github.com/containerd/containerd/v2/pkg/shim"

	_ "github.com/containerd/containerd/v2/cmd/containerd/builtins"
)

func main() {
	name := filepath.Base(os.Args[0])
	ctx := context.Background()
	switch name {
	case "containerd-shim-runc-v2":
		shim.RunShim(ctx, manager.NewShimManager("io.containerd.runc.v2"))
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
		fmt.Fprintf(os.Stderr, "%s: run me as containerd, containerd-shim-runc-v2, ctr or aicr-node\n", name)
		os.Exit(2)
	}
}
