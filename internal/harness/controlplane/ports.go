package controlplane

import (
	"context"
	"fmt"
	"net"
	"strconv"
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
