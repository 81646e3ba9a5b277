package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func runNode(verb string, args []string) int {
	switch verb {
	case "up":
		return runUp(args)
	case "init":
		return runInit(args)
	case "sweep":
		return runSweep(args)
	default:
		fmt.Fprintf(os.Stderr, "aicr-node: unknown verb %q (up|init|sweep)\n", verb)
		return 2
	}
}

// runUp is the node's supervisor, on the host: it claims a network index, builds the node's network
// namespace (veth pair, addresses, default route), its cgroup root in every hierarchy, its files,
// relays the control plane's and the registries' loopback ports into the namespace, and starts
// `aicr-node init` as PID 1 of a new PID and mount namespace inside it (containerd, kubelet, device
// plugin). It prints one JSON line {"ready":true,...} once they run, and tears everything down on
// SIGTERM/SIGINT, when its standard input closes (the test process is gone), or when init ends.
//
// A line "restart-kubelet" on standard input restarts the kubelet (the device plugin registers again).
func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	configPath := fs.String("config", "", "the node's node.json")
	if err := fs.Parse(args); err != nil || *configPath == "" {
		fmt.Fprintln(os.Stderr, "usage: aicr-node up --config DIR/node.json")
		return 2
	}
	c, err := readConfig(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	// Nodes whose supervisor was killed outright (SIGKILL leaves no chance to clean up) go first.
	sweepStale(os.Stderr)

	t := &teardown{dir: c.Dir}
	defer func() { t.run(os.Stderr) }()
	n, err := claim(c.Dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	t.net = &n
	l := Layout{Dir: c.Dir}
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "aicr-node up: %s: %v\n", what, err)
		return 1
	}
	if err := os.MkdirAll(l.Logs(), 0o755); err != nil {
		return fail("logs", err)
	}
	regs, err := startRegistries(c, l)
	t.registries = regs
	if err != nil {
		return fail("registries", err)
	}
	if err := createNetwork(n); err != nil {
		return fail("network", err)
	}
	if err := createCgroups(n.CgroupRoot()); err != nil {
		return fail("cgroups", err)
	}
	if err := writeNodeFiles(c, l, n); err != nil {
		return fail("files", err)
	}
	ports := []int{c.APIServerPort, c.ServicePort}
	for _, r := range c.Registries {
		_, p, err := net.SplitHostPort(r.Host)
		if err != nil {
			return fail("registry "+r.Host, err)
		}
		var port int
		fmt.Sscan(p, &port)
		ports = append(ports, port)
	}
	relays, err := startRelays("/run/netns/"+n.Netns(), ports)
	if err != nil {
		return fail("relays", err)
	}
	t.relays = relays

	self, err := os.Executable()
	if err != nil {
		return fail("executable", err)
	}
	initLog, err := os.OpenFile(filepath.Join(l.Logs(), "init.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fail("log", err)
	}
	defer initLog.Close()
	// nsenter joins the node's network namespace and execs init, which is then PID 1 of the new PID
	// namespace (with a UTS namespace of its own: the node's hostname is its name): when it ends, the kernel kills every process of the node (shims and containers too),
	// and its mount namespace — every overlay, shm and network-namespace mount made there — goes with it.
	cmd := exec.Command("nsenter", "--net=/run/netns/"+n.Netns(), "--",
		filepath.Join(filepath.Dir(self), "aicr-node"), "init", "--config", *configPath, "--index", fmt.Sprint(n.X))
	cmd.Stderr = initLog
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail("init", err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS,
		Pdeathsig:  syscall.SIGKILL,
		Setpgid:    true,
	}
	if err := cmd.Start(); err != nil {
		return fail("init", err)
	}
	t.init = cmd
	initDone := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { initDone <- cmd.Wait() }()
	t.initDone = initDone

	stdinLines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			stdinLines <- sc.Text()
		}
		close(stdinLines)
	}()

	ready := false
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if line == "ready" && !ready {
				ready = true
				info, _ := json.Marshal(map[string]any{
					"ready": true, "index": n.X, "nodeIP": n.NodeIP(), "hostIP": n.HostIP(), "netns": n.Netns(),
					"cgroupRoot": n.CgroupRoot(), "podCIDR": n.PodCIDR(), "containerdSocket": l.ContainerdSock(),
					"kubeletRoot": l.KubeletRoot(), "pid": os.Getpid(), "initPid": cmd.Process.Pid,
				})
				fmt.Println(string(info))
			} else {
				fmt.Fprintln(os.Stderr, "init:", line)
			}
		case err := <-initDone:
			t.initDone = nil
			fmt.Fprintf(os.Stderr, "aicr-node: init ended (%v); tearing the node down (logs in %s)\n", err, l.Logs())
			if !ready {
				tailLog(os.Stderr, filepath.Join(l.Logs(), "init.log"), 20)
			}
			return 1
		case line, ok := <-stdinLines:
			if !ok {
				return 0
			}
			if strings.TrimSpace(line) == "restart-kubelet" {
				cmd.Process.Signal(syscall.SIGUSR1)
			}
		case <-sigs:
			return 0
		}
	}
}

func tailLog(w io.Writer, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	fmt.Fprintln(w, strings.Join(ls, "\n"))
}

// teardown undoes what up made, in reverse: init (and with it every process and mount of the node),
// the relays, the registries, the cgroups, the network namespace and veth, the claim, the directory.
type teardown struct {
	dir        string
	net        *Network
	relays     *relays
	init       *exec.Cmd
	initDone   chan error
	registries []*exec.Cmd
}

func (t *teardown) run(w io.Writer) {
	if t.init != nil && t.initDone != nil {
		t.init.Process.Signal(syscall.SIGTERM)
		select {
		case <-t.initDone:
		case <-time.After(15 * time.Second):
			fmt.Fprintln(w, "aicr-node: init did not stop within 15 s: killing it")
			t.init.Process.Kill()
			<-t.initDone
		}
	}
	if t.relays != nil {
		t.relays.close()
	}
	for _, r := range t.registries {
		r.Process.Signal(syscall.SIGTERM)
	}
	for _, r := range t.registries {
		r.Wait()
	}
	if t.net != nil {
		cleanNode(w, *t.net, t.dir)
	} else {
		os.RemoveAll(t.dir)
	}
}

// cleanNode removes what a node of index n left: its cgroups, its network namespace (and the veth
// pair with it), its directory, and its claim. Used by teardown and by the sweep of stale nodes.
func cleanNode(w io.Writer, n Network, dir string) {
	if err := removeCgroups(n.CgroupRoot(), 10*time.Second); err != nil {
		fmt.Fprintln(w, "aicr-node: cgroups:", err)
	}
	deleteNetwork(w, n)
	if dir != "" {
		if err := removeAllRetry(dir); err != nil {
			fmt.Fprintln(w, "aicr-node: directory:", err)
		}
	}
	releaseClaim(n)
}

// removeAllRetry removes a directory; a just-ended mount namespace can hold a file busy for a moment.
func removeAllRetry(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// startRegistries runs the registries the node owns (Registry.Serve) and waits until each accepts
// connections on its loopback port.
func startRegistries(c *Config, l Layout) ([]*exec.Cmd, error) {
	var cmds []*exec.Cmd
	for i, r := range c.Registries {
		if r.Serve == "" {
			continue
		}
		f, err := os.OpenFile(filepath.Join(l.Logs(), fmt.Sprintf("registry-%d.log", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return cmds, err
		}
		cmd := exec.Command("/usr/bin/docker-registry", "serve", r.Serve)
		cmd.Stdout = f
		cmd.Stderr = f
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Dir(r.Serve)}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		err = cmd.Start()
		f.Close()
		if err != nil {
			return cmds, fmt.Errorf("docker-registry for %s: %w", r.Host, err)
		}
		cmds = append(cmds, cmd)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, r := range c.Registries {
		if r.Serve == "" {
			continue
		}
		for {
			conn, err := net.DialTimeout("tcp", r.Host, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				return cmds, fmt.Errorf("the registry on %s did not answer within 30 s", r.Host)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return cmds, nil
}
