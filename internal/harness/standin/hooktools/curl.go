package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// curlConnectFailed is curl's exit code for "Failed to connect to host".
const curlConnectFailed = 7

// curl runs the chart's `curl --connect-timeout N HOST:PORT`, which only
// asks whether etcd accepts connections: the script goes on when curl
// exits 0 or 52 (empty reply) and retries on anything else. The stand-in
// connects and exits 0, or exits 7 as curl does when it cannot connect; it
// sends no request.
func curl(args []string) (int, error) {
	timeout := 0 * time.Second
	var target string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--connect-timeout" && i+1 < len(args):
			secs, err := strconv.ParseFloat(args[i+1], 64)
			if err != nil || secs <= 0 {
				return 2, fmt.Errorf("curl stand-in: --connect-timeout %q: want seconds", args[i+1])
			}
			timeout = time.Duration(secs * float64(time.Second))
			i++
		case strings.HasPrefix(a, "-"):
			return 2, fmt.Errorf("curl stand-in: option %q is not provided (only --connect-timeout SECONDS URL)", a)
		case target != "":
			return 2, fmt.Errorf("curl stand-in: one URL only, got %q and %q", target, a)
		default:
			target = a
		}
	}
	addr, err := hostPort(target)
	if err != nil {
		return 3, fmt.Errorf("curl stand-in: %w", err)
	}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return curlConnectFailed, fmt.Errorf("curl: (7) Failed to connect to %s: %v", addr, err)
	}
	conn.Close()
	return 0, nil
}

// hostPort is where curl would connect for target: a URL, or host:port
// without a scheme (curl then assumes http, port 80).
func hostPort(target string) (string, error) {
	if target == "" {
		return "", fmt.Errorf("no URL")
	}
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := url.Parse(target)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("URL %q: cannot tell the host", target)
	}
	defaultPort := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	if defaultPort == "" {
		return "", fmt.Errorf("URL %q: scheme %q is not provided", target, u.Scheme)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
