// Command containerd-shim-runc-v2 is containerd 2.x's runc shim for the real test node, a binary of
// its own: the shim loads every plugin registered in its process, so it cannot share one with the
// daemon's plugins (test/node/main.go).
package main

import (
	"context"

	"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/manager"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2/task/plugin"
	"github.com/containerd/containerd/v2/pkg/shim"
)

func main() {
	shim.RunShim(context.Background(), manager.NewShimManager("io.containerd.runc.v2"))
}
