// Package up is `control-plane up`, the supervisor of the test control plane. It needs nothing but the
// standard library, so its tests (`go test -race ./up/`) build in seconds, where a test of package
// main would link all of Kubernetes.
package up

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler as child processes of
// this binary, from the files the caller laid out in --dir (see README.md), and prints one JSON line
// {"ready":true,"url":…,"port":…,…} on stdout once the apiserver is ready. Without --port the
// apiserver's port is one held for it until it binds it (heldPort), and the ready line says which. It
// stops them all on SIGTERM/SIGINT or when its standard input closes (the test process that started it
// is gone), and removes etcd's data.
func Run(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory holding the PKI, token file and audit policy")
	port := fs.Int("port", 0, "kube-apiserver secure port on 127.0.0.1 (0: a free one, held until it binds; the ready line names it)")
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
	// The ports are held (holdPort) until the component that binds them answers: see heldPort.
	var held []*heldPort
	defer func() {
		for _, h := range held {
			h.release()
		}
	}()
	hold := func() (int, *heldPort, error) {
		h, err := holdPort()
		if err != nil {
			return 0, nil, err
		}
		held = append(held, h)
		return h.port, h, nil
	}
	clientPort, clientHold, err := hold()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	peerPort, peerHold, err := hold()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A port the caller chose is not held (and not shared): a clash there fails kube-apiserver's bind.
	apiPort, apiHold := *port, (*heldPort)(nil)
	if apiPort == 0 {
		if apiPort, apiHold, err = hold(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	etcdClient := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	etcdPeer := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	f := func(name string) string { return filepath.Join(d, name) }
	etcdDir := f("etcd")
	sup := &supervisor{}
	defer func() {
		sup.stop()
		os.RemoveAll(etcdDir)
	}()

	if err := sup.start(self, "etcd", f("etcd.log"), "etcd", "--data-dir", etcdDir,
		"--listen-client-url", etcdClient, "--listen-peer-url", etcdPeer, "--reuse-port"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitHTTP(etcdClient+"/health", nil, 60*time.Second, sup); err != nil {
		fmt.Fprintln(os.Stderr, "etcd did not become healthy:", err)
		return 1
	}
	// etcd answers on its client port and has bound its peer port (embed binds both before serving).
	clientHold.release()
	peerHold.release()

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
		// Aggregated APIs (custom and external metrics) and admission webhooks are reached at their
		// Service's endpoint address: there is no kube-proxy to route a ClusterIP.
		"--enable-aggregator-routing=true",
		"--profiling=false",
		"--v=" + *verbosity,
	}
	if apiHold != nil {
		apiArgs = append(apiArgs, "--permit-port-sharing")
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
	apiHold.release()

	controllers := "job,garbagecollector,namespace,serviceaccount,serviceaccount-token,root-ca-cert-publisher,clusterrole-aggregation," +
		"ttl-after-finished,replicaset,deployment,daemonset,statefulset,cronjob,nodelifecycle,podgc," +
		"endpointslice,resourcequota,disruption," +
		// HPA (pod-autoscaling), and the ResourceClaim controller: it lifts a deleted pod's
		// reservation and the claim's delete protection, without which a claim never goes.
		"horizontalpodautoscaling,resourceclaim-controller"
	if err := sup.start(self, "kube-controller-manager", f("kube-controller-manager.log"), "kube-controller-manager",
		"--kubeconfig="+f("controller-manager.kubeconfig"),
		// The apiserver's address is ours to say (the port may be the one held here), whatever the
		// kubeconfig's server; --secure-port=0 leaves the authentication/authorization kubeconfigs unused.
		"--master="+api,
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
		// Client-side rate limits of a large cluster's controller-manager (Kubernetes' own 5,000-node
		// scale tests: --kube-api-qps=100 --kube-api-burst=100; default 20/30). Each controller has
		// its own client and limiter, and lifting the not-ready taint costs the node lifecycle
		// controller two requests per Node (GET, PATCH): at 20 QPS a fleet of 1,000 new nodes waited
		// over 100 s for it, and the Job controller made 20 pods a second.
		"--kube-api-qps=100", "--kube-api-burst=100",
		// The HPA controller's loop every 5 s instead of 15 s: a scale decision sooner in the tests.
		"--horizontal-pod-autoscaler-sync-period=5s",
		"--v="+*verbosity,
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := sup.start(self, "kube-scheduler", f("kube-scheduler.log"), "kube-scheduler",
		"--kubeconfig="+f("scheduler.kubeconfig"),
		"--master="+api,
		"--authentication-kubeconfig="+f("scheduler.kubeconfig"),
		"--authorization-kubeconfig="+f("scheduler.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=0",
		"--leader-elect=false",
		// The scale tests' figure too (default 50; a binding and an event per pod). The flag is
		// deprecated in favour of --config's clientConnection, and applies while there is no --config.
		"--kube-api-qps=100",
		"--v="+*verbosity,
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ready, _ := json.Marshal(map[string]any{"ready": true, "url": api, "port": apiPort, "etcd": etcdClient, "pid": os.Getpid()})
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
	// stopping is set by stop() and read by each child's waiting goroutine: atomic, as it is written
	// and read from different goroutines.
	stopping atomic.Bool
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
		// An exit before stop() is news (the control plane is broken); one during it is not. done
		// closes last, so once stop() has returned no child can still report an exit.
		if !s.stopping.Load() {
			select {
			case s.exited <- name:
			default: // nobody reads that many: the first exits already stop the control plane
			}
		}
		close(c.done)
	}()
	s.children = append(s.children, c)
	return nil
}

// stop ends the children newest first (scheduler, controller-manager, apiserver, etcd).
func (s *supervisor) stop() {
	s.stopping.Store(true)
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

// heldPort is a TCP port on 127.0.0.1 reserved for a child that has yet to bind it.
//
// The free-port race, and why this way: a port found by opening a listener and closing it is anyone's
// until the child binds it — another test's server, the ephemeral port of any outgoing connection.
// Handing the child the open listener would close that window, but neither kube-apiserver's flags nor
// etcd's embed.Config take one (the apiserver's Listener option has no flag); binding port 0 in the
// child and reading the port back would do too, but the caller must know the apiserver's address
// before it starts (--port, the components' kubeconfigs). What both do take is SO_REUSEPORT
// (kube-apiserver --permit-port-sharing, etcd's SocketOpts.ReusePort: our `etcd --reuse-port`). So the
// supervisor binds the port itself with SO_REUSEPORT — bound, never listening, so no connection is
// ever queued on it — and keeps it until the child answers on it. In between, any other bind of the
// port fails with EADDRINUSE: Linux lets a port be shared only by sockets that all set SO_REUSEPORT,
// of the same user, asked for that port by number; a bind to port 0 and an outgoing connection never
// get a port in use. The child's bind with SO_REUSEPORT succeeds, so there is no window and nothing
// to retry. (A same-user process binding that very port with SO_REUSEPORT could still share it: only
// on purpose.)
type heldPort struct {
	fd   int
	port int
}

// holdPort binds a fresh TCP port on 127.0.0.1 with SO_REUSEPORT, without listening.
func holdPort() (*heldPort, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("hold a port: socket: %w", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("hold a port: SO_REUSEPORT: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("hold a port: bind 127.0.0.1:0: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("hold a port: getsockname: %w", err)
	}
	return &heldPort{fd: fd, port: sa.(*syscall.SockaddrInet4).Port}, nil
}

// release gives the port up (the child has bound it, or will not). Safe on nil and twice.
func (h *heldPort) release() {
	if h != nil && h.fd >= 0 {
		syscall.Close(h.fd)
		h.fd = -1
	}
}

// caPool reads a PEM file of CA certificates. Every block must be a certificate that parses, and
// there must be one at least: a CA file that does not parse is an error naming it, never an empty
// pool (which would fail every TLS handshake later with an unknown-authority error naming no file).
func caPool(caFile string) (*x509.CertPool, error) {
	data, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, fmt.Errorf("CA file %s: not PEM (after %d certificate(s))", caFile, n)
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("CA file %s: a %q PEM block where a CERTIFICATE was expected", caFile, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("CA file %s: certificate %d: %w", caFile, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("CA file %s: no certificate in it", caFile)
	}
	return pool, nil
}

func adminClient(caFile, certFile, keyFile string) (*http.Client, error) {
	pool, err := caPool(caFile)
	if err != nil {
		return nil, err
	}
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
