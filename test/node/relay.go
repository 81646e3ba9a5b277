package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// relays carry TCP from the node's network namespace to the host's loopback: a listener on
// 0.0.0.0:<port> inside the namespace for each port, each connection piped to 127.0.0.1:<port> on the
// host. So the kubelet reaches kube-apiserver, containerd the registries, and the `kubernetes`
// Service's DNAT target the fault proxy, at the addresses their certificates name (127.0.0.1), while
// nothing on the host listens beyond loopback. Bytes pass unchanged: TLS and client certificates are
// end to end.
type relays struct {
	listeners []net.Listener
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
}

// listenIn opens a TCP listener inside the network namespace at nsPath. The socket belongs to the
// namespace it was created in; the thread that made it goes back to the host's namespace, or, if it
// cannot, ends with its goroutine (still locked) so no other goroutine ever runs there.
func listenIn(nsPath, addr string) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer host.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		l, lerr := net.Listen("tcp", addr)
		if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
			if l != nil {
				l.Close()
			}
			ch <- result{nil, fmt.Errorf("back to the host's network namespace: %w", err)}
			return // the thread stays locked and exits with this goroutine
		}
		runtime.UnlockOSThread()
		ch <- result{l, lerr}
	}()
	r := <-ch
	return r.l, r.err
}

func startRelays(nsPath string, ports []int) (*relays, error) {
	r := &relays{conns: map[net.Conn]struct{}{}}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := listenIn(nsPath, fmt.Sprintf("0.0.0.0:%d", p))
		if err != nil {
			r.close()
			return nil, fmt.Errorf("relay of port %d: %w", p, err)
		}
		r.listeners = append(r.listeners, l)
		r.wg.Add(1)
		go r.serve(l, fmt.Sprintf("127.0.0.1:%d", p))
	}
	return r, nil
}

func (r *relays) track(c net.Conn, add bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		return false
	}
	if add {
		r.conns[c] = struct{}{}
	} else {
		delete(r.conns, c)
	}
	return true
}

func (r *relays) serve(l net.Listener, upstream string) {
	defer r.wg.Done()
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			out, err := net.Dial("tcp", upstream)
			if err != nil {
				in.Close()
				return
			}
			if !r.track(in, true) || !r.track(out, true) {
				in.Close()
				out.Close()
				return
			}
			defer func() {
				r.track(in, false)
				r.track(out, false)
				in.Close()
				out.Close()
			}()
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go pipe(out, in)
			go pipe(in, out)
			<-done
			<-done
		}()
	}
}

func (r *relays) close() {
	for _, l := range r.listeners {
		l.Close()
	}
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
}
