package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// runDevicePlugin is a fake device plugin for the real test node (test/cluster/real/node): it
// advertises --count healthy devices of --resource over the kubelet's device-plugin API, answers
// Allocate with environment variables only (no device nodes, no mounts: the node has no GPU), and
// registers again whenever the kubelet restarts (a restarted kubelet removes every socket in the
// directory and recreates kubelet.sock). It stops on SIGTERM/SIGINT, removing its socket.
func runDevicePlugin(args []string) int {
	fs := flag.NewFlagSet("device-plugin", flag.ContinueOnError)
	dir := fs.String("dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin directory")
	resource := fs.String("resource", "nvidia.com/gpu", "extended resource name")
	count := fs.Int("count", 8, "number of fake devices")
	socket := fs.String("socket", "aicr-fake-gpu.sock", "this plugin's socket name in --dir")
	if err := fs.Parse(args); err != nil || *count < 0 {
		fmt.Fprintln(os.Stderr, "usage: control-plane device-plugin [--dir D] [--resource R] [--count N]")
		return 2
	}
	p := &fakeDevices{resource: *resource}
	for i := 0; i < *count; i++ {
		p.ids = append(p.ids, fmt.Sprintf("fake-gpu-%d", i))
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	path := filepath.Join(*dir, *socket)
	kubeletSock := filepath.Join(*dir, "kubelet.sock")
	for ctx.Err() == nil {
		if err := p.serveOnce(ctx, path, kubeletSock, *socket); err != nil {
			fmt.Fprintln(os.Stderr, "device-plugin:", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	os.Remove(path)
	return 0
}

type fakeDevices struct {
	pluginapi.UnimplementedDevicePluginServer
	resource string
	ids      []string
}

// serveOnce serves on a fresh socket, registers with the kubelet, and returns once the kubelet has
// restarted (our socket removed or kubelet.sock replaced) or ctx ends.
func (p *fakeDevices) serveOnce(ctx context.Context, path, kubeletSock, endpoint string) error {
	// Listen only once the kubelet is there: it empties the directory when it starts.
	for inode(kubeletSock) == 0 {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go srv.Serve(l)
	defer srv.Stop()

	var kubeletIno uint64
	for {
		// A kubelet starting meanwhile empties the directory: listen again before registering.
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("socket %s removed before registration: listening again", path)
		}
		ino, err := register(ctx, kubeletSock, &pluginapi.RegisterRequest{
			Version:      pluginapi.Version,
			Endpoint:     endpoint,
			ResourceName: p.resource,
		})
		if err == nil {
			kubeletIno = ino
			fmt.Fprintf(os.Stderr, "device-plugin: registered %s (%d devices)\n", p.resource, len(p.ids))
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("socket %s removed (kubelet restarted?): registering again", path)
		}
		if inode(kubeletSock) != kubeletIno {
			return fmt.Errorf("%s replaced (kubelet restarted): registering again", kubeletSock)
		}
	}
}

func inode(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

func register(ctx context.Context, kubeletSock string, req *pluginapi.RegisterRequest) (uint64, error) {
	ino := inode(kubeletSock)
	if ino == 0 {
		return 0, fmt.Errorf("%s not there yet", kubeletSock)
	}
	conn, err := grpc.NewClient("unix://"+kubeletSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(c, req)
	return ino, err
}

func (p *fakeDevices) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices once, all healthy, then holds the stream until the kubelet ends it.
func (p *fakeDevices) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	devs := make([]*pluginapi.Device, len(p.ids))
	for i, id := range p.ids {
		devs[i] = &pluginapi.Device{ID: id, Health: pluginapi.Healthy}
	}
	if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

// Allocate answers with the devices' IDs in NVIDIA_VISIBLE_DEVICES only: the stand-in for what
// NVIDIA's container runtime would then make visible.
func (p *fakeDevices) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	out := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(c.DevicesIds, ",")},
		})
	}
	return out, nil
}

func (p *fakeDevices) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

func (p *fakeDevices) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
