package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runInit is PID 1 of the node: a new PID, mount and UTS namespace inside the node's network namespace
// (`up` starts it through nsenter). It makes the node's filesystem view — its own /proc, a sysfs of
// its network namespace with the host's cgroup hierarchies moved onto it, <dir>/run, <dir>/var/lib and
// <dir>/var/log as /run, /var/lib and /var/log, the real systemd's runtime directory as /run/systemd —
// adds the `kubernetes` Service's one DNAT rule, and runs containerd, the kubelet and the device
// plugin. On SIGTERM it stops them and exits; the kernel then kills whatever else lives in the
// namespace (shims, containers) and releases every mount made here.
func runInit(args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	configPath := fs.String("config", "", "node.json")
	index := fs.Int("index", 0, "the node's network index")
	if err := fs.Parse(args); err != nil || *configPath == "" || *index == 0 {
		fmt.Fprintln(os.Stderr, "usage: aicr-node init --config FILE --index X")
		return 2
	}
	c, err := readConfig(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Signals first: a SIGTERM during start-up must not kill PID 1 before it can stop its children.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD, syscall.SIGUSR1)

	l := Layout{Dir: c.Dir}
	n := Network{X: *index}
	// The node's own hostname (what hostNetwork pods see, as on a cluster's node).
	if err := syscall.Sethostname([]byte(c.Name)); err != nil {
		fmt.Fprintln(os.Stderr, "aicr-node init: hostname:", err)
		return 1
	}
	if err := nodeMounts(c, l); err != nil {
		fmt.Fprintln(os.Stderr, "aicr-node init: mounts:", err)
		return 1
	}
	if err := nodeNetwork(c, n); err != nil {
		fmt.Fprintln(os.Stderr, "aicr-node init: network:", err)
		return 1
	}
	self, _ := os.Executable()
	binDir := filepath.Dir(self)
	env := []string{
		"PATH=" + binDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root",
	}
	p := &procs{byPid: map[int]string{}, logs: l.Logs(), env: env}
	if err := p.start("containerd", filepath.Join(binDir, "containerd"), "--config", l.P("containerd.toml")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitSocket(l.ContainerdSock(), 60*time.Second, p, sigs); err != nil {
		fmt.Fprintln(os.Stderr, "aicr-node init: containerd:", err)
		p.stopAll()
		return 1
	}
	kubeletArgs := []string{
		"kubelet",
		"--config=" + l.P("kubelet.yaml"),
		"--kubeconfig=" + l.P("kubelet.kubeconfig"),
		"--root-dir=" + l.KubeletRoot(),
		"--hostname-override=" + c.Name,
		"--node-ip=" + n.NodeIP(),
		"--v=" + fmt.Sprint(c.Verbosity),
	}
	if len(c.Labels) > 0 {
		kubeletArgs = append(kubeletArgs, "--node-labels="+labelFlag(c.Labels))
	}
	startKubelet := func() error { return p.start("kubelet", c.ControlPlane, kubeletArgs...) }
	if err := startKubelet(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		p.stopAll()
		return 1
	}
	if c.GPUs > 0 {
		if err := p.start("device-plugin", c.ControlPlane, "device-plugin", "--count", fmt.Sprint(c.GPUs),
			// The kubelet's /var/lib/kubelet/device-plugins, by its host path: the command line names the node.
			"--resource", "nvidia.com/gpu", "--dir", l.P("var", "lib", "kubelet", "device-plugins")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			p.stopAll()
			return 1
		}
	}
	fmt.Println("ready")

	restarting := false
	// A SIGCHLD can be coalesced with another: reap on a timer too.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-tick.C:
			s = syscall.SIGCHLD
		}
		switch s {
		case syscall.SIGCHLD:
			for _, name := range p.reap() {
				if name == "kubelet" && restarting {
					restarting = false
					if err := startKubelet(); err != nil {
						fmt.Fprintln(os.Stderr, err)
						p.stopAll()
						return 1
					}
					continue
				}
				fmt.Fprintf(os.Stderr, "aicr-node init: %s exited unexpectedly (see %s.log); stopping the node\n", name, filepath.Join(l.Logs(), name))
				p.stopAll()
				return 1
			}
		case syscall.SIGUSR1:
			if pid := p.pidOf("kubelet"); pid > 0 {
				fmt.Fprintln(os.Stderr, "aicr-node init: restarting the kubelet")
				restarting = true
				syscall.Kill(pid, syscall.SIGTERM)
			}
		default:
			p.stopAll()
			return 0
		}
	}
}

// nodeMounts builds the node's view of the filesystem in its (new, private) mount namespace.
func nodeMounts(c *Config, l Layout) error {
	steps := []struct {
		what             string
		src, dst, fstype string
		flags            uintptr
	}{
		// Nothing mounted here propagates back to the host.
		{"private /", "", "/", "", syscall.MS_REC | syscall.MS_PRIVATE},
		// A sysfs shows the network devices of the namespace that mounts it: without a fresh one the
		// CNI plugins and cAdvisor would read the host's. It hides /sys/fs/cgroup, so the cgroup
		// hierarchies are set aside and moved back onto it.
		{"cgroups aside", "/sys/fs/cgroup", l.P("cgroup-move"), "", syscall.MS_BIND | syscall.MS_REC},
		{"sysfs", "sysfs", "/sys", "sysfs", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC},
		{"cgroups back", l.P("cgroup-move"), "/sys/fs/cgroup", "", syscall.MS_MOVE},
		{"proc", "proc", "/proc", "proc", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC},
		{"/run", l.Run(), "/run", "", syscall.MS_BIND},
		{"/var/lib", l.VarLib(), "/var/lib", "", syscall.MS_BIND},
		{"/var/log", l.VarLog(), "/var/log", "", syscall.MS_BIND},
	}
	if c.SystemdDir != "" {
		steps = append(steps, struct {
			what             string
			src, dst, fstype string
			flags            uintptr
		}{"/run/systemd", c.SystemdDir, "/run/systemd", "", syscall.MS_BIND | syscall.MS_REC})
	}
	for _, s := range steps {
		if err := syscall.Mount(s.src, s.dst, s.fstype, s.flags, ""); err != nil {
			return fmt.Errorf("%s (%s on %s): %w", s.what, s.src, s.dst, err)
		}
	}
	for name := range kernelTunables {
		src := l.P("sysctl", strings.ReplaceAll(name, "/", "."))
		if err := syscall.Mount(src, "/proc/sys/"+name, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("/proc/sys/%s: %w", name, err)
		}
	}
	return nil
}

// nodeNetwork: forwarding for the pod bridge, and the `kubernetes` Service without kube-proxy: one
// DNAT rule (locally made connections in OUTPUT — hostNetwork pods, the kubelet —, pods' in
// PREROUTING) from 10.96.0.1:443 to the relay of the fault proxy on the node's address.
func nodeNetwork(c *Config, n Network) error {
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644); err != nil {
		return err
	}
	to := fmt.Sprintf("%s:%d", n.NodeIP(), c.ServicePort)
	for _, chain := range []string{"OUTPUT", "PREROUTING"} {
		out, err := exec.Command("iptables", "-w", "-t", "nat", "-A", chain, "-d", ServiceIP+"/32", "-p", "tcp",
			"--dport", "443", "-j", "DNAT", "--to-destination", to, "-m", "comment", "--comment", "aicr: kubernetes Service (no kube-proxy)").CombinedOutput()
		if err != nil {
			return fmt.Errorf("iptables %s: %v: %s", chain, err, out)
		}
	}
	return nil
}

type procs struct {
	byPid map[int]string
	logs  string
	env   []string
}

func (p *procs) start(name, bin string, args ...string) error {
	f, err := os.OpenFile(filepath.Join(p.logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	p.byPid[cmd.Process.Pid] = name
	return nil
}

func (p *procs) pidOf(name string) int {
	for pid, n := range p.byPid {
		if n == name {
			return pid
		}
	}
	return 0
}

// reap collects every exited child (PID 1 inherits the orphans: shims, containers' leftovers) and
// returns the names of our own components among them.
func (p *procs) reap() []string {
	var ended []string
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return ended
		}
		if name, ok := p.byPid[pid]; ok {
			delete(p.byPid, pid)
			ended = append(ended, name)
		}
	}
}

// stopAll: the kubelet and the device plugin first (nothing restarts containers while containerd
// stops), then containerd; each gets 10 s after SIGTERM.
func (p *procs) stopAll() {
	for _, group := range [][]string{{"kubelet", "device-plugin"}, {"containerd"}} {
		var pids []int
		for _, name := range group {
			if pid := p.pidOf(name); pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
				pids = append(pids, pid)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(pids) > 0 && time.Now().Before(deadline) {
			p.reap()
			var left []int
			for _, pid := range pids {
				if _, ok := p.byPid[pid]; ok {
					left = append(left, pid)
				}
			}
			pids = left
			time.Sleep(50 * time.Millisecond)
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func waitSocket(path string, limit time.Duration, p *procs, sigs chan os.Signal) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil
		}
		if ended := p.reap(); len(ended) > 0 {
			return fmt.Errorf("%s exited", strings.Join(ended, ", "))
		}
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM || s == syscall.SIGINT {
				return fmt.Errorf("stopped while waiting for %s", path)
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer within %s", path, limit)
}
