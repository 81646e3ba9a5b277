package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// kernelTunables are the values the kubelet wants (pkg/kubelet/cm setupKernelTunables). It writes
// any that differ; on this shared machine those are global settings, so the node's /proc/sys shows
// these files instead (bound over the real entries in the node's mount namespace) and the kubelet
// finds nothing to change.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

func write(path, text string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), mode)
}

// writeNodeFiles lays out every configuration file of the node in its directory.
func writeNodeFiles(c *Config, l Layout, n Network) error {
	for _, d := range []string{l.Run(), l.VarLib(), l.VarLog(), l.Logs(), l.KubeletRoot(), l.PodLogs(),
		l.P("run", "systemd"), l.P("var", "lib", "kubelet", "device-plugins"), l.P("opt", "containerd"),
		l.P("flexvolume"), l.P("cgroup-move")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := servingCert(l, c.Name, n.NodeIP()); err != nil {
		return fmt.Errorf("kubelet serving certificate: %w", err)
	}
	files := map[string]string{
		l.P("kubelet.kubeconfig"):                         kubeconfig(c, l),
		l.P("kubelet.yaml"):                               kubeletConfig(c, l, n),
		l.P("containerd.toml"):                            containerdConfig(c, l),
		filepath.Join(l.CNIConfDir(), "10-aicr.conflist"): cniConfig(n),
		l.P("resolv.conf"):                                "# the test node has no DNS server (no cluster DNS, no upstream resolver)\noptions timeout:1 attempts:1\n",
	}
	for _, r := range c.Registries {
		files[filepath.Join(l.CertsD(), r.Host, "hosts.toml")] = hostsToml(r)
	}
	for path, text := range files {
		if err := write(path, text, 0o644); err != nil {
			return err
		}
	}
	for name, value := range kernelTunables {
		if err := write(l.P("sysctl", strings.ReplaceAll(name, "/", ".")), value+"\n", 0o644); err != nil {
			return err
		}
	}
	return baseSpec(c, l)
}

func kubeconfig(c *Config, l Layout) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority: %s
users:
- name: system:node:%s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: node
  context: {cluster: test, user: "system:node:%s"}
current-context: node
`, c.APIServerPort, l.P("ca.crt"), c.Name, l.P("kubelet-client.crt"), l.P("kubelet-client.key"), c.Name)
}

func kubeletConfig(c *Config, l Layout, n Network) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine mounts cgroup v1 (hybrid): kubelets from 1.35 refuse it unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
# Unique per node: nothing collides with other nodes or tests, and teardown removes it everywhere.
cgroupRoot: %s
cgroupsPerQOS: true
failSwapOn: false
protectKernelDefaults: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
volumePluginDir: %s
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization:
  mode: Webhook
# A busy CI disk must never evict the test's pods, and nothing is garbage-collected from the image store.
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "0%%"
  nodefs.inodesFree: "0%%"
  imagefs.available: "0%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: %s
serializeImagePulls: false
staticPodPath: ""
`, n.CgroupRoot(), l.ContainerdSock(), l.PodLogs(), l.P("flexvolume"), n.NodeIP(),
		l.P("kubelet-serving.crt"), l.P("kubelet-serving.key"), l.P("ca.crt"), l.P("resolv.conf"))
}

func containerdConfig(c *Config, l Layout) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
# Nothing the test node needs: NRI (its socket), tracing exporters.
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %q
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = %q

[plugins."io.containerd.cri.v1.runtime"]
  disable_apparmor = true
  enable_selinux = false
  # This machine's root lacks CAP_SYS_RESOURCE: no oom_score_adj below containerd's own (the sandbox's
  # default -998 would fail). Containers get max(their score, containerd's), as on a rootless node.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = %q
    max_conf_num = 1
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      # The stand-in for NVIDIA's container runtime: nvidia-smi in every container (base-spec.json).
      base_runtime_spec = %q
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = %q
        SystemdCgroup = false
`, l.VarLib()+"/containerd", l.Run()+"/containerd", l.ContainerdSock(), l.P("opt", "containerd"),
		c.SandboxImage, l.CertsD(), l.CNIConfDir(), l.BaseSpec(), l.Run()+"/runc")
}

func cniConfig(n Network) string {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "aicr-node",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": n.PodCIDR()}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n"
}

func hostsToml(r Registry) string {
	scheme := "http"
	ca := ""
	if r.CA != "" {
		scheme = "https"
		ca = fmt.Sprintf("  ca = %q\n", r.CA)
	}
	return fmt.Sprintf("server = \"%s://%s\"\n\n[host.\"%s://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n%s",
		scheme, r.Host, scheme, r.Host, ca)
}

// baseSpec writes containerd's own default spec plus one read-only bind mount of the nvidia-smi
// stand-in at /usr/bin/nvidia-smi. CRI starts every container of the runtime from it and adds its
// own mounts (volumes, /etc/hosts, the ServiceAccount token) on top.
func baseSpec(c *Config, l Layout) error {
	ctx := namespaces.WithNamespace(context.Background(), "k8s.io")
	s, err := oci.GenerateSpec(ctx, nil, &containers.Container{ID: "base"})
	if err != nil {
		return err
	}
	// What CRI removes from the default spec when a runtime has no base spec: the node then runs
	// containers exactly as a stock containerd would, plus the mount below.
	s.Process.ApparmorProfile = ""
	s.Process.Rlimits = nil
	if s.Linux != nil {
		s.Linux.Seccomp = nil
	}
	if c.NvidiaSmi != "" {
		s.Mounts = append(s.Mounts, specs.Mount{
			Destination: "/usr/bin/nvidia-smi",
			Type:        "bind",
			Source:      c.NvidiaSmi,
			Options:     []string{"rbind", "ro", "nosuid", "nodev"},
		})
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return write(l.BaseSpec(), string(b)+"\n", 0o644)
}

// servingCert issues the kubelet's serving certificate for the node's address, signed by the test
// CA (<dir>/ca.crt, <dir>/ca.key as test/cluster/certs.ts made them).
func servingCert(l Layout, name, ip string) error {
	caPEM, err := os.ReadFile(l.P("ca.crt"))
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(l.P("ca.key"))
	if err != nil {
		return err
	}
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return errors.New("ca.crt or ca.key is not PEM")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return err
	}
	var caKey any
	if k, err := x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
		caKey = k
	} else if k, err := x509.ParseECPrivateKey(kb.Bytes); err == nil {
		caKey = k
	} else {
		return fmt.Errorf("ca.key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := write(l.P("kubelet-serving.crt"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), 0o644); err != nil {
		return err
	}
	return write(l.P("kubelet-serving.key"), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})), 0o600)
}
