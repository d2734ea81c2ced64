package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shell starts /bin/sh -c script as a Process logging to a file in a temp
// folder, and kills it when the test ends.
func shell(t *testing.T, ctx context.Context, script string, env ...string) *Process {
	t.Helper()
	p, err := StartProcess(ctx, ProcessOptions{
		Name:    "sh",
		Path:    "/bin/sh",
		Args:    []string{"-c", script},
		Env:     env,
		LogFile: filepath.Join(t.TempDir(), "sh.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	return p
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func TestProcessExitCodeAndLog(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int
	}{
		{"echo hello; exit 0", 0},
		{"echo hello >&2; exit 3", 3},
	} {
		t.Run(tc.script, func(t *testing.T) {
			p := shell(t, t.Context(), tc.script)
			err := p.Wait()
			if (err == nil) != (tc.code == 0) {
				t.Errorf("Wait() = %v for exit code %d", err, tc.code)
			}
			if p.ExitCode() != tc.code {
				t.Errorf("ExitCode() = %d, want %d", p.ExitCode(), tc.code)
			}
			if !strings.Contains(p.Log(), "hello") {
				t.Errorf("Log() = %q, want stdout and stderr in it", p.Log())
			}
		})
	}
}

func TestProcessEnvironmentIsNotInherited(t *testing.T) {
	t.Setenv("KUBECONFIG", "/home/someone/.kube/config")
	p := shell(t, t.Context(), `echo "kubeconfig=[$KUBECONFIG] own=[$OWN] path=[$PATH]"`, "OWN=yes")
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	log := p.Log()
	if !strings.Contains(log, "kubeconfig=[]") || !strings.Contains(log, "own=[yes]") || strings.Contains(log, "path=[]") {
		t.Errorf("environment: %q; want no KUBECONFIG, OWN=yes and PATH", log)
	}
}

func TestProcessLogOnlyShowsThisProcess(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "shared.log")
	for _, word := range []string{"first", "second"} {
		p, err := StartProcess(t.Context(), ProcessOptions{Name: word, Path: "/bin/sh", Args: []string{"-c", "echo " + word}, LogFile: logFile})
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Wait()
		if word == "second" && strings.Contains(p.Log(), "first") {
			t.Errorf("second process's Log() shows the first's output: %q", p.Log())
		}
	}
	data, _ := os.ReadFile(logFile)
	if !strings.Contains(string(data), "first") || !strings.Contains(string(data), "second") {
		t.Errorf("the shared log file lost output: %q", data)
	}
}

func TestStopKillsTheWholeGroupAfterGrace(t *testing.T) {
	// The shell ignores SIGTERM and has a child that would outlive it.
	p := shell(t, t.Context(), `trap "" TERM; sleep 300 & echo child=$!; wait`)
	line, err := p.WaitForLogMatch(t.Context(), regexp.MustCompile(`^child=\d+`))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimPrefix(line, "child="))
	if err := p.Stop(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() || p.ExitCode() != -1 {
		t.Errorf("after Stop: exited %v, code %d; want killed by a signal", p.Exited(), p.ExitCode())
	}
	// The child was in the process group; give the kernel a moment to
	// deliver the signal to it (it is not our child, so nothing to reap).
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(child) {
		t.Errorf("child %d of the stopped process still runs", child)
	}
}

func TestStopLetsAGracefulProcessExit(t *testing.T) {
	p := shell(t, t.Context(), `trap "echo bye; exit 0" TERM; echo ready; while :; do sleep 0.05; done`)
	if err := p.WaitForLog(t.Context(), "ready"); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if p.ExitCode() != 0 {
		t.Errorf("ExitCode = %d, want 0 from the TERM trap", p.ExitCode())
	}
}

func TestContextEndKillsTheProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := shell(t, ctx, "sleep 300")
	cancel()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("process still running 30s after its context ended")
	}
}

func TestWaitForLog(t *testing.T) {
	t.Run("line among others", func(t *testing.T) {
		p := shell(t, t.Context(), `echo starting; echo "connected to hub-b"; sleep 300`)
		if err := p.WaitForLog(t.Context(), "connected to hub-b"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("process exits without it", func(t *testing.T) {
		p := shell(t, t.Context(), `echo "something else"; exit 2`)
		err := p.WaitForLog(t.Context(), "never")
		if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "something else") {
			t.Errorf("err = %v, want one saying it exited, quoting the log", err)
		}
	})
	t.Run("last line without newline at exit", func(t *testing.T) {
		p := shell(t, t.Context(), `printf "final words"`)
		if err := p.WaitForLog(t.Context(), "final words"); err != nil {
			t.Error(err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		p := shell(t, t.Context(), `echo waiting; sleep 300`)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := p.WaitForLog(ctx, "never")
		if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "context canceled")) {
			t.Errorf("err = %v, want the context's", err)
		}
	})
}

func TestSignalAfterExitIsANoOp(t *testing.T) {
	p := shell(t, t.Context(), "exit 0")
	_ = p.Wait()
	for _, f := range []func() error{p.Kill, func() error { return p.Stop(time.Second) }, func() error { return p.Signal(syscall.SIGTERM) }} {
		if err := f(); err != nil {
			t.Errorf("signalling an exited process: %v", err)
		}
	}
}

func TestFreePortIsBindable(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if !portFree(port) {
		t.Errorf("port %d from FreePort cannot be bound", port)
	}
	ps, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0] == ps[1] || ps[1] == ps[2] || ps[0] == ps[2] {
		t.Errorf("freePorts returned duplicates: %v", ps)
	}
}
