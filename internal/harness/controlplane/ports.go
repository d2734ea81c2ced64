package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// loopback is the only address anything here binds: the suites need no
// network and must not expose test API servers with admin tokens.
const loopback = "127.0.0.1"

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago: the
// kernel picks it for a listener that is closed at once. Another program can
// take it before the caller binds it, so callers retry with a new port when a
// component reports "address already in use" (Start does).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return 0, fmt.Errorf("choosing a free port on %s: %w", loopback, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct free ports. All listeners are held until the
// end so the kernel cannot hand out the same port twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return nil, fmt.Errorf("choosing a free port on %s: %w", loopback, err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portFree reports whether port can be bound on 127.0.0.1 now. Go's
// listeners set SO_REUSEADDR like kube-apiserver's, so connections of a
// killed server lingering in TIME_WAIT do not count as taken.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// portPoll is how often waitPortFree checks: the kernel closes a killed
// process's listener as it reaps it, so the first or second check succeeds.
const portPoll = 50 * time.Millisecond

// waitPortFree waits until port can be bound on 127.0.0.1.
func waitPortFree(ctx context.Context, port int) error {
	t := time.NewTicker(portPoll)
	defer t.Stop()
	for !portFree(port) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("port %d on %s still taken: %w", port, loopback, context.Cause(ctx))
		case <-t.C:
		}
	}
	return nil
}

// leftBehind waits until each port is free and says which are not by ctx's
// end, except a port whose listener belongs to none of the processes ours
// lists: the kernel closes a killed process's listeners before it is
// reaped, so such a listener is whoever got the port next (a parallel
// suite's FreePort can be handed it at once), not a leftover of ours.
func leftBehind(ctx context.Context, ports []int, ours map[int]bool) error {
	var errs []error
	for _, port := range ports {
		err := waitPortFree(ctx, port)
		if err == nil {
			continue
		}
		if pids, perr := listenerHolders(port); perr == nil && len(pids) > 0 && !slices.ContainsFunc(pids, func(pid int) bool { return ours[pid] }) {
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// listenerHolders returns the ids of the processes holding a TCP listener
// on 127.0.0.1:port (from /proc/net/tcp and each process's fd table). An
// empty answer with a nil error means no process of those /proc shows holds
// one.
func listenerHolders(port int) ([]int, error) {
	inodes, err := listenerInodes("/proc/net/tcp", port)
	if err != nil || len(inodes) == 0 {
		return nil, err
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && inodes[target] {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// listenerInodes reads a /proc/net/tcp table and returns the socket links
// ("socket:[inode]") of the listeners on 127.0.0.1:port.
func listenerInodes(table string, port int) (map[string]bool, error) {
	data, err := os.ReadFile(table)
	if err != nil {
		return nil, err
	}
	// 127.0.0.1 in the kernel's byte order, as /proc/net/tcp prints it.
	local := fmt.Sprintf("0100007F:%04X", port)
	const listen = "0A"
	inodes := map[string]bool{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || f[1] != local || f[3] != listen {
			continue
		}
		inodes["socket:["+f[9]+"]"] = true
	}
	return inodes, nil
}
