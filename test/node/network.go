package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// createNetwork: the node's network namespace, a veth pair (host end <HostVeth> 10.250.x.1/24, node
// end eth0 10.250.x.2/24) and the node's default route through the host end. The host forwards
// nothing (ip_forward stays as it is, off here), so the node reaches only the host's veth address —
// and, through the relays, the loopback ports of the control plane and the registries.
func createNetwork(n Network) error {
	ns := n.Netns()
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	steps := [][]string{
		{"link", "add", n.HostVeth(), "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"addr", "add", n.HostIP() + "/24", "dev", n.HostVeth()},
		{"link", "set", n.HostVeth(), "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", n.NodeIP() + "/24", "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
		{"-n", ns, "route", "add", "default", "via", n.HostIP()},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
	}
	return nil
}

// deleteNetwork removes the namespace (its veth end, bridge and pod veths go with it once no process
// holds it) and the host end if it is still there.
func deleteNetwork(w io.Writer, n Network) {
	if _, err := os.Stat("/run/netns/" + n.Netns()); err == nil {
		if err := ip("netns", "del", n.Netns()); err != nil {
			fmt.Fprintln(w, "aicr-node:", err)
		}
	}
	if _, err := os.Stat("/sys/class/net/" + n.HostVeth()); err == nil {
		if err := ip("link", "del", n.HostVeth()); err != nil {
			fmt.Fprintln(w, "aicr-node:", err)
		}
	}
}
