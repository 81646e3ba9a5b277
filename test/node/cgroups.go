package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// cgroupMounts lists the mount points of every cgroup hierarchy on this host: each v1 controller,
// name=systemd and the unified (v2) one of a hybrid layout, or the one v2 root.
func cgroupMounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				out = append(out, fields[4])
			}
		}
	}
	return out
}

// createCgroups makes the node's cgroup root in every hierarchy (the kubelet requires it to exist).
// A new v1 cpuset cgroup has no CPUs or memory nodes until given its parent's.
func createCgroups(root string) error {
	for _, m := range cgroupMounts() {
		dir := filepath.Join(m, root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
				}
			}
		}
	}
	return nil
}

// removeCgroups removes the node's cgroup root and everything beneath it in every hierarchy, deepest
// first. A process still listed in one is killed (only the node's processes are ever placed there);
// an rmdir refused while the kernel finishes an exit is retried until the limit.
func removeCgroups(root string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		last = nil
		for _, m := range cgroupMounts() {
			top := filepath.Join(m, root)
			if _, err := os.Stat(top); err != nil {
				continue
			}
			var dirs []string
			filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
			for _, d := range dirs {
				killProcs(d)
				if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
					last = fmt.Errorf("rmdir %s: %w", d, err)
				}
			}
		}
		if last == nil || time.Now().After(deadline) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func killProcs(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
