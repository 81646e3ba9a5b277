package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aicr.test/control-plane/up"
	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name != "kubectl" && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	var cmd *cobra.Command
	switch name {
	case "kubectl":
		cmd = kubectlcmd.NewDefaultKubectlCommand()
	case "kube-apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "kube-controller-manager":
		cmd = controllermanager.NewControllerManagerCommand()
	case "kube-scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kubelet":
		cmd = kubelet.NewKubeletCommand(context.Background())
	case "device-plugin":
		os.Exit(runDevicePlugin(args))
	case "etcd":
		os.Exit(runEtcd(args))
	case "up":
		os.Exit(up.Run(args))
	default:
		fmt.Fprintf(os.Stderr, "usage: control-plane up|etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|device-plugin|kubectl ...\n")
		os.Exit(2)
	}
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}
