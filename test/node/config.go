package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config is what test/cluster/real/node/node.ts writes to <dir>/node.json before `aicr-node up`.
type Config struct {
	// Name of the Node (the kubelet's --hostname-override).
	Name string `json:"name"`
	// Dir holds everything of this node (configs, state, logs); `up` removes it when it ends.
	Dir string `json:"dir"`
	// ControlPlane is the control-plane binary (test/control-plane): its kubelet and device-plugin.
	ControlPlane string `json:"controlPlane"`
	// NvidiaSmi is the stand-in binary the default runtime mounts at /usr/bin/nvidia-smi.
	NvidiaSmi string `json:"nvidiaSmi"`
	// APIServerPort is kube-apiserver's port on the host's 127.0.0.1; the node reaches it at its own
	// 127.0.0.1 on the same port (relayed).
	APIServerPort int `json:"apiserverPort"`
	// ServicePort is the fault proxy's port on the host's 127.0.0.1: what the `kubernetes` Service
	// (10.96.0.1:443) leads to from the node and its pods.
	ServicePort int `json:"servicePort"`
	// Registries the node pulls from, as 127.0.0.1:<port> on the host (relayed to the same address in
	// the node). CA empty: plain http.
	Registries []Registry `json:"registries"`
	// SandboxImage is the pause image containerd pins (in one of Registries).
	SandboxImage string `json:"sandboxImage"`
	// Labels the kubelet registers the Node with (--node-labels).
	Labels map[string]string `json:"labels"`
	// GPUs is how many fake nvidia.com/gpu devices the device plugin advertises (0: no plugin).
	GPUs int `json:"gpus"`
	// SystemdDir, when set, is bound at the node's /run/systemd (a real systemd's runtime directory).
	SystemdDir string `json:"systemdDir"`
	// Verbosity of the kubelet's log (klog -v).
	Verbosity int `json:"verbosity"`
}

type Registry struct {
	Host string `json:"host"`
	CA   string `json:"ca"`
	// Serve, when set, is a docker-registry configuration file: `up` runs that registry (listening on
	// Host) for as long as the node lives, so it ends with the node however the test process ends.
	Serve string `json:"serve"`
}

func readConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Name == "" || c.Dir == "" || c.ControlPlane == "" || c.APIServerPort == 0 || c.ServicePort == 0 {
		return nil, fmt.Errorf("%s: name, dir, controlPlane, apiserverPort and servicePort are required", path)
	}
	return c, nil
}

// Layout: the node's paths, all beneath Dir. In the node's mount namespace <Dir>/run, <Dir>/var/lib
// and <Dir>/var/log are also its /run, /var/lib and /var/log, so every default path a component
// writes to stays in Dir.
type Layout struct{ Dir string }

func (l Layout) P(parts ...string) string { return filepath.Join(append([]string{l.Dir}, parts...)...) }
func (l Layout) Run() string              { return l.P("run") }
func (l Layout) VarLib() string           { return l.P("var", "lib") }
func (l Layout) VarLog() string           { return l.P("var", "log") }
func (l Layout) Logs() string             { return l.P("logs") }
func (l Layout) KubeletRoot() string      { return l.P("var", "lib", "kubelet") }
func (l Layout) PodLogs() string          { return l.P("var", "log", "pods") }
func (l Layout) ContainerdSock() string   { return l.P("run", "containerd", "containerd.sock") }
func (l Layout) CNIConfDir() string       { return l.P("etc", "cni", "net.d") }
func (l Layout) CertsD() string           { return l.P("etc", "containerd", "certs.d") }
func (l Layout) BaseSpec() string         { return l.P("etc", "containerd", "base-spec.json") }

// Network: the node's addresses for index x (1..250): a /24 on the veth pair and a /24 for pods.
type Network struct{ X int }

func (n Network) Netns() string    { return fmt.Sprintf("aicr-node-%d", n.X) }
func (n Network) HostVeth() string { return fmt.Sprintf("aicrn%d", n.X) }
func (n Network) HostIP() string   { return fmt.Sprintf("10.250.%d.1", n.X) }
func (n Network) NodeIP() string   { return fmt.Sprintf("10.250.%d.2", n.X) }
func (n Network) PodCIDR() string  { return fmt.Sprintf("10.251.%d.0/24", n.X) }
func (n Network) CgroupRoot() string {
	return fmt.Sprintf("/aicr-node-%d", n.X)
}

// ServiceIP is the `kubernetes` Service's ClusterIP in the control plane's 10.96.0.0/16.
const ServiceIP = "10.96.0.1"

func labelFlag(labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
