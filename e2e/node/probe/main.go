// Command probe is what the node suite (e2e/node) runs in its test pods,
// imported as an image by internal/harness/node's ImportProgram:
//
//	probe serve ADDR        listen on ADDR (TCP) until stopped: a Ready pod
//	probe exit CODE AFTER   exit with CODE after AFTER: a crashing container
//	probe dial ADDR...      dial each ADDR once and print how it failed,
//	                        then wait to be stopped
//
// dial prints one line per address, "dial ADDR: CLASS (error)", where
// CLASS is "unreachable" for ENETUNREACH/EHOSTUNREACH, "timeout",
// "refused" or "connected": the test reads the class from the pod's log.
package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// dialTimeout only bounds a dial that hangs; the network rule says a dial
// out of the node's namespace must fail with "unreachable" long before.
const dialTimeout = 20 * time.Second

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe serve ADDR | exit CODE AFTER | dial ADDR...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		l, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		fmt.Println("serving on", os.Args[2])
		waitForStop()
	case "exit":
		code, _ := strconv.Atoi(os.Args[2])
		after, _ := time.ParseDuration(os.Args[3])
		fmt.Printf("exiting with %d after %s\n", code, after)
		time.Sleep(after)
		os.Exit(code)
	case "dial":
		for _, addr := range os.Args[2:] {
			c, err := net.DialTimeout("tcp", addr, dialTimeout)
			if err == nil {
				c.Close()
			}
			fmt.Printf("dial %s: %s (%v)\n", addr, class(err), err)
		}
		waitForStop()
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func class(err error) string {
	var netErr net.Error
	switch {
	case err == nil:
		return "connected"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "unreachable"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	default:
		return "other"
	}
}

// waitForStop returns on SIGTERM (the kubelet stopping the container); as
// PID 1 the process gets no default signal handling.
func waitForStop() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
