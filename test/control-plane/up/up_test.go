package up

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The supervisor's stopping flag is written by stop() and read by the goroutine of every child that
// exits. A child that exited on its own before stop() (its goroutine reading the flag) must not race
// with stop() setting it: under -race the unsynchronised bool of before failed here.
func TestStopAfterAChildExitedOnItsOwn(t *testing.T) {
	s := &supervisor{}
	dir := t.TempDir()
	if err := s.start("/bin/sh", "crashed", filepath.Join(dir, "crashed.log"), "-c", "exit 3"); err != nil {
		t.Fatal(err)
	}
	<-s.children[0].done
	s.stop()
	// done closes once the child's goroutine has decided: its exit came before stop(), so it is news.
	select {
	case name := <-s.exited:
		if name != "crashed" {
			t.Fatalf("exited reported %q, want crashed", name)
		}
	default:
		t.Fatal("the exit before stop() was not reported")
	}
}

// Children that stop() ends are not reported as exits, and once stop() has returned no goroutine is
// left to report one (each child's done closes after its goroutine's last word).
func TestStopEndsChildrenQuietly(t *testing.T) {
	s := &supervisor{}
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("c%d", i)
		if err := s.start("/bin/sh", name, filepath.Join(dir, name+".log"), "-c", "exec sleep 30"); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	s.stop()
	if took := time.Since(started); took > 4*time.Second {
		t.Fatalf("stop took %s: SIGTERM did not end the children", took)
	}
	select {
	case name := <-s.exited:
		t.Fatalf("%s was reported as exited although stop() ended it", name)
	default:
	}
}

// stop() while children exit by themselves at the same moment: nothing to assert but the race
// detector's silence, and that stop() returns.
func TestStopWhileChildrenExit(t *testing.T) {
	s := &supervisor{}
	dir := t.TempDir()
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("c%d", i)
		if err := s.start("/bin/sh", name, filepath.Join(dir, name+".log"), "-c", "exit 0"); err != nil {
			t.Fatal(err)
		}
	}
	s.stop()
}

// A held port is refused to everyone else — before, the port was found by a listener closed again
// at once, and anything could take it before the child bound it — while the child, binding with
// SO_REUSEPORT as kube-apiserver --permit-port-sharing and etcd --reuse-port do, gets it and every
// connection (the held socket never listens, so it queues none).
func TestHeldPortIsRefusedToOthersAndGivenToTheChild(t *testing.T) {
	h, err := holdPort()
	if err != nil {
		t.Fatal(err)
	}
	defer h.release()
	addr := fmt.Sprintf("127.0.0.1:%d", h.port)
	for _, a := range []string{addr, fmt.Sprintf("0.0.0.0:%d", h.port)} {
		if l, err := net.Listen("tcp", a); err == nil {
			l.Close()
			t.Fatalf("%s: another process could bind the held port", a)
		} else if !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("%s: %v, want EADDRINUSE", a, err)
		}
	}

	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	child, err := lc.Listen(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("the child could not bind the held port with SO_REUSEPORT: %v", err)
	}
	defer child.Close()
	accept := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				t.Fatalf("dial %d: %v", i, err)
			}
			child.(*net.TCPListener).SetDeadline(time.Now().Add(2 * time.Second))
			in, err := child.Accept()
			c.Close()
			if err != nil {
				t.Fatalf("connection %d did not reach the child: %v", i, err)
			}
			in.Close()
		}
	}
	accept(16)
	h.release()
	h.release() // twice is harmless
	accept(4)
}

func TestHeldPortsAreDistinct(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 3; i++ {
		h, err := holdPort()
		if err != nil {
			t.Fatal(err)
		}
		defer h.release()
		if h.port == 0 || seen[h.port] {
			t.Fatalf("port %d twice or zero", h.port)
		}
		seen[h.port] = true
	}
	var none *heldPort
	none.release() // no port held (--port given): a no-op
}

// A CA file that does not parse is an error naming the file; before, AppendCertsFromPEM's false was
// ignored and the admin client got an empty pool (every handshake then failing, naming no file).
func TestAdminClientRefusesACAThatDoesNotParse(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile := filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	write(t, certFile, certPEM)
	write(t, keyFile, keyPEM)
	cases := map[string][]byte{
		"empty":          nil,
		"not PEM":        []byte("this is no certificate\n"),
		"a key":          keyPEM,
		"bad DER":        pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("no DER")}),
		"trailing junk":  append(append([]byte(nil), certPEM...), "junk\n"...),
		"truncated":      certPEM[:len(certPEM)/2],
		"a key after it": append(append([]byte(nil), certPEM...), keyPEM...),
	}
	for name, ca := range cases {
		t.Run(name, func(t *testing.T) {
			caFile := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".crt")
			write(t, caFile, ca)
			c, err := adminClient(caFile, certFile, keyFile)
			if err == nil {
				t.Fatalf("a CA file that does not parse (%s) gave a client", name)
			}
			if c != nil || !strings.Contains(err.Error(), caFile) {
				t.Fatalf("error %q does not name %s", err, caFile)
			}
		})
	}
}

// A CA that parses is the client's trust: it reaches a server whose certificate that CA is.
func TestAdminClientTrustsItsCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	write(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	certPEM, keyPEM := selfSigned(t)
	write(t, filepath.Join(dir, "admin.crt"), certPEM)
	write(t, filepath.Join(dir, "admin.key"), keyPEM)
	c, err := adminClient(caFile, filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "admin"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
