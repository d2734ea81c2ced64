// Command pause is the node harness's sandbox image (internal/harness/node):
// the process that holds a pod's namespaces while its containers come and go.
// Nothing can be pulled on the test machines, so holdfast builds its own.
//
// As PID 1 of a pod that shares its process namespace it must reap
// orphans, or they stay zombies; it exits on SIGINT or SIGTERM, which is
// how the runtime stops a sandbox. Arguments are ignored: the harness also
// runs it as the holder of its namespaces, with the run folder as an
// argument so a stale holder can be found by its command line.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	// A child that exited before the handler was installed sent its
	// SIGCHLD to nobody.
	reap()
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking: one SIGCHLD may stand
// for several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
