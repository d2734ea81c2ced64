package controlplane

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestListenerHolders: Stop tells its own leftover listener from another
// process's that got the port next; the holder of a listener this test
// opens is this process, and nobody once it is closed.
func TestListenerHolders(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	pids, err := listenerHolders(port)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int{os.Getpid()}) {
		t.Errorf("holders of 127.0.0.1:%d = %v, want [%d] (this test)", port, pids, os.Getpid())
	}
	l.Close()
	pids, err = listenerHolders(port)
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) != 0 {
		t.Errorf("holders of 127.0.0.1:%d after Close = %v, want none", port, pids)
	}
}

// TestListenerInodes reads only 127.0.0.1 listeners of the port: not a
// connection from it, not another address, not another port.
func TestListenerInodes(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:B3AD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:B3AD 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1
   2: 00000000:B3AD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 100 0 0 10 0
   3: 0100007F:B3AE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 100 0 0 10 0
`
	path := filepath.Join(t.TempDir(), "tcp")
	if err := os.WriteFile(path, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := listenerInodes(path, 0xB3AD)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["socket:[111]"] {
		t.Errorf("listenerInodes = %v, want only socket:[111]", got)
	}
}

// TestLeftBehindIgnoresAnotherProcesssListener: Stop's port check fails on
// a listener of the cluster's own processes, not on one another process
// opened on the port since (the TestNode teardown flake: "stopped, but
// port 46125 on 127.0.0.1 still taken", a parallel suite's).
func TestLeftBehindIgnoresAnotherProcesssListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := leftBehind(ctx, []int{port}, map[int]bool{os.Getpid() + 1: true}); err != nil {
		t.Errorf("a port held by a process that is not the cluster's: %v, want nil", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := leftBehind(ctx, []int{port}, map[int]bool{os.Getpid(): true}); err == nil || !strings.Contains(err.Error(), "still taken") {
		t.Errorf("a port held by the cluster's own process: %v, want still taken", err)
	}
}
