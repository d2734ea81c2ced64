package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/holdfast-dist/holdfast/internal/logtail"
)

// ProcessOptions describes a program to run under test.
type ProcessOptions struct {
	// Name names the process in errors, e.g. "kube-apiserver (member1)".
	Name string
	// Path is the binary.
	Path string
	Args []string
	// Env is the process's environment on top of PATH, HOME and TMPDIR,
	// which are inherited. Nothing else is: a developer's KUBECONFIG or
	// KUBERNETES_SERVICE_HOST must never point a process under test at a
	// real cluster.
	Env []string
	// Dir is the working directory; empty means the test's.
	Dir string
	// LogFile receives stdout and stderr. It is appended to, so a process
	// started again (Cluster.Restart) continues the same file.
	LogFile string
}

// inheritedEnv is what a process under test gets from the test's
// environment: enough to find programs and write temporary files.
var inheritedEnv = []string{"PATH", "HOME", "TMPDIR"}

// Process is a program started by StartProcess. Its methods are safe for
// concurrent use.
type Process struct {
	name    string
	logPath string
	// logStart is where this process's output begins in the log file,
	// which earlier processes may have written to.
	logStart int64
	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error // set before done is closed

	// mu orders signals against reaping: once the process is reaped its
	// pid may belong to someone else, so no signal may be sent after.
	mu     sync.Mutex
	reaped bool
}

// logPoll is how often WaitForLog reads new output: a tenth of a second is
// far below anything a suite measures and costs nothing on small logs.
const logPoll = 100 * time.Millisecond

// StartProcess starts o.Path with its output appended to o.LogFile. The
// process runs in its own process group, which Stop, Kill and the end of ctx
// signal as a whole, and the kernel SIGKILLs it if the test binary dies
// (Pdeathsig), so a crashed or interrupted test never leaves it running.
// Like exec.CommandContext, ctx bounds the process's lifetime.
func StartProcess(ctx context.Context, o ProcessOptions) (*Process, error) {
	if o.Path == "" || o.LogFile == "" {
		return nil, fmt.Errorf("process %q: Path and LogFile are required", o.Name)
	}
	logFile, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("process %s: %w", o.Name, err)
	}
	fi, err := logFile.Stat()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("process %s: %w", o.Name, err)
	}
	fmt.Fprintf(logFile, "=== holdfast e2e: starting %s at %s\n", o.Name, time.Now().Format(time.RFC3339Nano))

	cmd := exec.Command(o.Path, o.Args...)
	cmd.Dir = o.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	p := &Process{name: o.Name, logPath: o.LogFile, logStart: fi.Size(), cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the *thread* that forked the child exits,
		// not the process (golang/go#27505). Forking from a locked thread
		// that waits for the child keeps that thread alive exactly as long
		// as the child; the thread exits with this goroutine afterwards.
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			logFile.Close()
			return
		}
		_ = waitExited(cmd.Process.Pid)
		p.mu.Lock()
		// Whatever the process started in its group goes with it, while
		// the zombie still holds the group id.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.waitErr = cmd.Wait()
		p.reaped = true
		p.mu.Unlock()
		logFile.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("process %s: starting %s: %w", o.Name, o.Path, err)
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = p.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

// Name is the name given in ProcessOptions.
func (p *Process) Name() string { return p.name }

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogFile is the path of the log the process writes to.
func (p *Process) LogFile() string { return p.logPath }

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns what exec.Cmd.Wait
// returned: nil for exit status 0, an *exec.ExitError otherwise.
func (p *Process) Wait() error {
	<-p.done
	return p.waitErr
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode is the exit status, or -1 while the process runs or if a signal
// ended it.
func (p *Process) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Signal sends sig to the process group; it does nothing once the process
// has exited (its group was killed with it).
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	err := syscall.Kill(-p.Pid(), sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nothing left in the group
	}
	if err != nil {
		return fmt.Errorf("process %s: signal %v: %w", p.name, sig, err)
	}
	return nil
}

// Kill SIGKILLs the process group and waits for the process to exit.
func (p *Process) Kill() error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM to the process group, waits up to grace for the process
// to exit, then SIGKILLs the group. It returns once the process has exited;
// the exit status is left to Wait and ExitCode.
func (p *Process) Stop(grace time.Duration) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return p.Kill()
	}
}

// Log returns everything this process has written so far (not what earlier
// processes wrote to the same file).
func (p *Process) Log() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.NewSectionReader(f, p.logStart, 1<<62))
	return string(data)
}

// WaitForLog waits until a line of the process's output contains substr. It
// fails when ctx ends or the process exits without writing it.
func (p *Process) WaitForLog(ctx context.Context, substr string) error {
	_, err := p.waitForLine(ctx, fmt.Sprintf("%q", substr), func(line string) bool { return strings.Contains(line, substr) })
	return err
}

// WaitForLogMatch waits until a line of the process's output matches re and
// returns that line. It fails when ctx ends or the process exits without
// writing one.
func (p *Process) WaitForLogMatch(ctx context.Context, re *regexp.Regexp) (string, error) {
	return p.waitForLine(ctx, "/"+re.String()+"/", re.MatchString)
}

func (p *Process) waitForLine(ctx context.Context, what string, match func(string) bool) (string, error) {
	f, err := os.Open(p.logPath)
	if err != nil {
		return "", fmt.Errorf("process %s: %w", p.name, err)
	}
	defer f.Close()
	if _, err := f.Seek(p.logStart, io.SeekStart); err != nil {
		return "", fmt.Errorf("process %s: %w", p.name, err)
	}
	r := bufio.NewReader(f)
	var partial string
	// scan consumes complete lines; a line still being written waits in
	// partial for its newline.
	scan := func() (string, bool) {
		for {
			chunk, err := r.ReadString('\n')
			partial += chunk
			if err != nil {
				return "", false
			}
			line := partial
			partial = ""
			if match(line) {
				return strings.TrimRight(line, "\n"), true
			}
		}
	}
	tick := time.NewTicker(logPoll)
	defer tick.Stop()
	for {
		if line, ok := scan(); ok {
			return line, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("process %s did not log %s (%w); see %s, last lines:\n%s", p.name, what, context.Cause(ctx), p.logPath, logtail.Last(p.logPath, 10))
		case <-p.done:
			// The last output may have landed after the previous scan.
			if line, ok := scan(); ok {
				return line, nil
			}
			if partial != "" && match(partial) {
				return partial, nil
			}
			return "", fmt.Errorf("process %s exited (%v) without logging %s; see %s, last lines:\n%s", p.name, p.waitErr, what, p.logPath, logtail.Last(p.logPath, 10))
		case <-tick.C:
		}
	}
}
