package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ClaimsDir holds one directory per node index in use (<x>/owner.json: the supervisor's pid, its
// start time and the node's directory). Taking an index, and sweeping the indexes of supervisors that
// died without cleaning up, happen under one lock: an abstract unix socket, which the kernel releases
// when its holder dies and which leaves nothing on disk. The directory goes when its last claim does.
const ClaimsDir = "/run/aicr-nodes"

const lockName = "@aicr-node-claims"

type owner struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
	Dir   string `json:"dir"`
}

func withLock(fn func() error) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: lockName})
		if err == nil {
			defer syscall.Close(fd)
			return fn()
		}
		syscall.Close(fd)
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return fmt.Errorf("node claims lock: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startTime is field 22 of /proc/<pid>/stat: with the pid it names one process, never a later one
// that reuses the pid.
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// claim takes the lowest free index from a per-process starting point (so concurrent test processes
// rarely contend), records this process as its owner and returns the node's network plan.
func claim(dir string) (Network, error) {
	var n Network
	err := withLock(func() error {
		if err := os.MkdirAll(ClaimsDir, 0o755); err != nil {
			return err
		}
		start := os.Getpid() % 250
		for i := 0; i < 250; i++ {
			x := (start+i)%250 + 1
			p := filepath.Join(ClaimsDir, strconv.Itoa(x))
			if err := os.Mkdir(p, 0o755); err != nil {
				continue
			}
			// The index is ours: anything still named after it was left by a dead owner.
			n = Network{X: x}
			if _, err := os.Stat("/run/netns/" + n.Netns()); err == nil {
				deleteNetwork(io.Discard, n)
			}
			removeCgroups(n.CgroupRoot(), time.Second)
			b, _ := json.Marshal(owner{PID: os.Getpid(), Start: startTime(os.Getpid()), Dir: dir})
			return os.WriteFile(filepath.Join(p, "owner.json"), b, 0o644)
		}
		return errors.New("no free node index (1..250) under " + ClaimsDir)
	})
	return n, err
}

func releaseClaim(n Network) {
	withLock(func() error {
		os.RemoveAll(filepath.Join(ClaimsDir, strconv.Itoa(n.X)))
		os.Remove(ClaimsDir) // only when empty
		return nil
	})
}

// sweepStale cleans the nodes whose supervisor is gone (killed with SIGKILL, or the machine restarted).
func sweepStale(w io.Writer) int {
	count := 0
	withLock(func() error {
		entries, _ := os.ReadDir(ClaimsDir)
		for _, e := range entries {
			x, err := strconv.Atoi(e.Name())
			if err != nil || !e.IsDir() {
				continue
			}
			p := filepath.Join(ClaimsDir, e.Name())
			var o owner
			b, err := os.ReadFile(filepath.Join(p, "owner.json"))
			if err == nil && json.Unmarshal(b, &o) == nil && o.PID > 0 && startTime(o.PID) == o.Start {
				continue // alive
			}
			if err != nil {
				// No owner record yet: a claim being made right now is younger than this.
				if info, serr := os.Stat(p); serr == nil && time.Since(info.ModTime()) < time.Minute {
					continue
				}
			}
			n := Network{X: x}
			fmt.Fprintf(w, "aicr-node: cleaning node %d left by pid %d (%s)\n", x, o.PID, o.Dir)
			removeCgroups(n.CgroupRoot(), 5*time.Second)
			deleteNetwork(w, n)
			if o.Dir != "" && strings.Contains(filepath.Base(o.Dir), "aicr-node") {
				removeAllRetry(o.Dir)
			}
			os.RemoveAll(p)
			count++
		}
		os.Remove(ClaimsDir)
		return nil
	})
	return count
}

// runSweep: `aicr-node sweep` cleans stale nodes by hand and says how many it found.
func runSweep(args []string) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Printf("%d stale node(s) cleaned\n", sweepStale(os.Stdout))
	return 0
}
