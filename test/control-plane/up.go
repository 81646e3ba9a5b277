package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runUp starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler as child processes of
// this binary, from the files the caller laid out in --dir (see README.md), and prints one JSON line
// {"ready":true,...} on stdout once the apiserver is ready. It stops them all on SIGTERM/SIGINT or when
// its standard input closes (the test process that started it is gone), and removes etcd's data.
func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory holding the PKI, token file and audit policy")
	port := fs.Int("port", 0, "kube-apiserver secure port on 127.0.0.1 (0: any free port)")
	watchStdin := fs.Bool("exit-on-stdin-close", true, "stop when standard input closes")
	verbosity := fs.String("v", "0", "klog verbosity of the components")
	if err := fs.Parse(args); err != nil || *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: control-plane up --dir DIR [--port N]")
		return 2
	}
	d, _ := filepath.Abs(*dir)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ports := freePorts(3)
	if *port != 0 {
		ports[2] = *port
	}
	etcdClient := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	etcdPeer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	apiPort := ports[2]
	f := func(name string) string { return filepath.Join(d, name) }
	etcdDir := f("etcd")
	sup := &supervisor{}
	defer func() {
		sup.stop()
		os.RemoveAll(etcdDir)
	}()

	if err := sup.start(self, "etcd", f("etcd.log"), "etcd", "--data-dir", etcdDir,
		"--listen-client-url", etcdClient, "--listen-peer-url", etcdPeer); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitHTTP(etcdClient+"/health", nil, 60*time.Second, sup); err != nil {
		fmt.Fprintln(os.Stderr, "etcd did not become healthy:", err)
		return 1
	}

	apiArgs := []string{
		"--etcd-servers=" + etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--tls-cert-file=" + f("server.crt"),
		"--tls-private-key-file=" + f("server.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--token-auth-file=" + f("tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"),
		"--service-account-signing-key-file=" + f("sa.key"),
		"--api-audiences=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--kubelet-client-certificate=" + f("kubelet-client.crt"),
		"--kubelet-client-key=" + f("kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file=" + f("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--audit-policy-file=" + f("audit-policy.yaml"),
		"--audit-log-path=" + f("audit.log"),
		"--audit-log-mode=blocking",
		"--audit-log-format=json",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=" + *verbosity,
	}
	if err := sup.start(self, "kube-apiserver", f("kube-apiserver.log"), append([]string{"kube-apiserver"}, apiArgs...)...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	api := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	client, err := adminClient(f("ca.crt"), f("admin.crt"), f("admin.key"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitHTTP(api+"/readyz", client, 120*time.Second, sup); err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver did not become ready:", err)
		return 1
	}

	controllers := "job,garbagecollector,namespace,serviceaccount,serviceaccount-token,root-ca-cert-publisher,clusterrole-aggregation," +
		"ttl-after-finished,replicaset,deployment,daemonset,statefulset,cronjob,nodelifecycle,podgc," +
		"endpointslice,resourcequota,disruption"
	if err := sup.start(self, "kube-controller-manager", f("kube-controller-manager.log"), "kube-controller-manager",
		"--kubeconfig="+f("controller-manager.kubeconfig"),
		"--authentication-kubeconfig="+f("controller-manager.kubeconfig"),
		"--authorization-kubeconfig="+f("controller-manager.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=0",
		"--controllers="+controllers,
		"--service-account-private-key-file="+f("sa.key"),
		"--root-ca-file="+f("ca.crt"),
		"--use-service-account-credentials=true",
		"--leader-elect=false",
		"--concurrent-job-syncs=10",
		"--concurrent-gc-syncs=20",
		// New Nodes carry the not-ready taint until the lifecycle controller's next pass lifts it:
		// every second instead of five, so a fresh test cluster schedules sooner.
		"--node-monitor-period=1s",
		"--v="+*verbosity,
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := sup.start(self, "kube-scheduler", f("kube-scheduler.log"), "kube-scheduler",
		"--kubeconfig="+f("scheduler.kubeconfig"),
		"--authentication-kubeconfig="+f("scheduler.kubeconfig"),
		"--authorization-kubeconfig="+f("scheduler.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=0",
		"--leader-elect=false",
		"--v="+*verbosity,
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ready, _ := json.Marshal(map[string]any{"ready": true, "url": api, "etcd": etcdClient, "pid": os.Getpid()})
	fmt.Println(string(ready))

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	stdinClosed := make(chan struct{})
	if *watchStdin {
		go func() {
			buf := make([]byte, 256)
			for {
				if _, err := os.Stdin.Read(buf); err != nil {
					close(stdinClosed)
					return
				}
			}
		}()
	}
	select {
	case <-sig:
	case <-stdinClosed:
	case name := <-sup.exited:
		fmt.Fprintf(os.Stderr, "%s exited; stopping the control plane (see %s.log)\n", name, filepath.Join(d, name))
		return 1
	}
	return 0
}

type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

type supervisor struct {
	children []*child
	exited   chan string
	stopping bool
}

func (s *supervisor) start(self, name, logPath string, args ...string) error {
	if s.exited == nil {
		s.exited = make(chan string, 8)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	// The children die with the supervisor, whatever kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(c.done)
		if !s.stopping {
			s.exited <- name
		}
	}()
	s.children = append(s.children, c)
	return nil
}

// stop ends the children newest first (scheduler, controller-manager, apiserver, etcd).
func (s *supervisor) stop() {
	s.stopping = true
	for i := len(s.children) - 1; i >= 0; i-- {
		c := s.children[i]
		c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			c.cmd.Process.Kill()
			<-c.done
		}
	}
}

func freePorts(n int) []int {
	var ls []net.Listener
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

func adminClient(caFile, certFile, keyFile string) (*http.Client, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}, nil
}

func waitHTTP(url string, client *http.Client, limit time.Duration, sup *supervisor) error {
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		select {
		case name := <-sup.exited:
			return fmt.Errorf("%s exited", name)
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s", url, strings.TrimSpace(last))
}
