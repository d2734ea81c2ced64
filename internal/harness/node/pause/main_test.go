package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPauseReapsAndExitsOnTerm runs the built program: a child it adopts
// is reaped (no zombie left), and SIGTERM ends it with status 0.
func TestPauseReapsAndExitsOnTerm(t *testing.T) {
	bin := t.TempDir() + "/pause"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The program's own child, started through the shell it execs into:
	// sh forks `true`, then execs pause, which inherits the child.
	cmd := exec.Command("/bin/sh", "-c", "true & exec "+bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Wait until pause has no zombie child left: /proc/<pid>/task/<pid>/children
	// lists live and zombie children alike.
	deadline := time.Now().Add(30 * time.Second)
	for {
		children, err := os.ReadFile("/proc/" + itoa(pid) + "/task/" + itoa(pid) + "/children")
		if err != nil {
			t.Fatal(err)
		}
		comm, _ := os.ReadFile("/proc/" + itoa(pid) + "/comm")
		if len(children) == 0 && string(comm) == "pause\n" && catchesTerm(t, pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pause (pid %d, comm %q) still has children %q: not reaped", pid, comm, children)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pause after SIGTERM: %v, want exit 0", err)
	}
}

// catchesTerm reports whether pid has installed its SIGTERM handler
// (SigCgt in /proc/<pid>/status), so the signal tests the handler, not the
// default action before the runtime started.
func catchesTerm(t *testing.T, pid int) bool {
	status, err := os.ReadFile("/proc/" + itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			return err == nil && bits&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	return false
}

func itoa(n int) string {
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
