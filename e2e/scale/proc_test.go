package scale

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseRSS(t *testing.T) {
	status := []byte("Name:\tkarmada-control\nVmPeak:\t 2000 kB\nVmRSS:\t   91234 kB\nThreads:\t12\n")
	got, err := ParseRSS(status)
	if err != nil || got != 91234*1024 {
		t.Errorf("ParseRSS = %d, %v; want %d", got, err, 91234*1024)
	}
	for _, bad := range []string{"Name:\tzombie\n", "VmRSS:\t12 MB\n", "VmRSS:\tlots kB\n"} {
		if _, err := ParseRSS([]byte(bad)); err == nil {
			t.Errorf("ParseRSS(%q) gave no error", bad)
		}
	}
}

func TestParseCPU(t *testing.T) {
	// A command name with a space and a parenthesis: fields are counted
	// from the last ')'. utime 250 + stime 50 ticks = 3 s.
	stat := []byte("4242 (karmada (cm) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0")
	got, err := ParseCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("ParseCPU = %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"no parens", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13"} {
		if _, err := ParseCPU([]byte(bad)); err == nil {
			t.Errorf("ParseCPU(%q) gave no error", bad)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	s, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSS <= 0 {
		t.Errorf("this test's RSS read as %d", s.RSS)
	}
}

func TestMeterFollowsRestarts(t *testing.T) {
	var m Meter
	m.Add(100, ProcSample{RSS: 50, CPU: 10 * time.Second}) // the window opens: 10 s before it do not count
	m.Add(100, ProcSample{RSS: 80, CPU: 12 * time.Second})
	// Restarted: the new process counts from zero.
	m.Add(200, ProcSample{RSS: 60, CPU: 3 * time.Second})
	m.Add(200, ProcSample{RSS: 70, CPU: 4 * time.Second})
	if got := m.CPU(); got != 6*time.Second {
		t.Errorf("CPU = %v, want 2s + 4s", got)
	}
	if m.PeakRSS != 80 || m.Samples != 4 {
		t.Errorf("peak %d, samples %d", m.PeakRSS, m.Samples)
	}
	var empty Meter
	if empty.CPU() != 0 {
		t.Errorf("an empty meter spent %v", empty.CPU())
	}
}

func TestParseLoadAverage(t *testing.T) {
	got, err := ParseLoadAverage([]byte("23.09 12.84 8.68 5/1021 4242\n"))
	if err != nil || got != 23.09 {
		t.Errorf("ParseLoadAverage = %v, %v", got, err)
	}
	if _, err := ParseLoadAverage(nil); err == nil {
		t.Error("an empty loadavg gave no error")
	}
}

func TestParseHeapAlloc(t *testing.T) {
	profile := []byte("heap profile: 3: 4096 [9: 8192] @ heap/1048576\n1: 4096 [1: 4096] @ 0x1\n\n# runtime.MemStats\n# Alloc = 123\n# TotalAlloc = 999\n# HeapAlloc = 7340032\n# HeapSys = 9999999\n")
	got, err := ParseHeapAlloc(profile)
	if err != nil || got != 7340032 {
		t.Fatalf("ParseHeapAlloc = %d, %v; want 7340032", got, err)
	}
	for _, bad := range []string{"", "# HeapSys = 12\n", "# HeapAlloc = \n", "\x1f\x8b binary pprof"} {
		if n, err := ParseHeapAlloc([]byte(bad)); err == nil {
			t.Errorf("ParseHeapAlloc(%q) = %d, want an error", bad, n)
		}
	}
}

// TestParseHeapAllocOfThisProcess reads the heap profile this Go runtime
// writes in the form the controller-manager's /debug/pprof/heap?debug=1
// serves (net/http/pprof writes it with runtime/pprof).
func TestParseHeapAllocOfThisProcess(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	got, err := ParseHeapAlloc(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if got <= 0 || uint64(got) > ms.HeapSys {
		t.Fatalf("HeapAlloc %d, want between 0 and HeapSys %d", got, ms.HeapSys)
	}
}

// fakeProc writes a /proc with the given processes: pid -> argv, and the
// CPU ticks (utime, stime) and start time of each.
func fakeProc(t *testing.T, procs map[int]fakeProcess) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Fields 3.. after "(comm)": state, then 10 fields, utime (14),
		// stime (15), 6 more, starttime (22).
		stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 %d 0 0\n", pid, p.comm, p.utime, p.stime, p.start)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		cmdline := ""
		if len(p.argv) > 0 { // a kernel thread's is empty
			cmdline = strings.Join(p.argv, "\x00") + "\x00"
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not a process: ignored.
	if err := os.WriteFile(filepath.Join(root, "loadavg"), []byte("1.0 1.0 1.0 1/1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

type fakeProcess struct {
	comm                string
	argv                []string
	utime, stime, start int64
}

func TestCPUByGroupOverAWindow(t *testing.T) {
	member := []string{"/tools/kube-apiserver", "--audit-log-path=/tmp/fleetA/003/m0-patched-audit/audit.log"}
	before := fakeProc(t, map[int]fakeProcess{
		10: {comm: "kube-apiserver", argv: member, utime: 100, stime: 50, start: 7},
		11: {comm: "karmada-control", argv: []string{"/bin/karmada-controller-manager", "--kubeconfig=/tmp/fleetA/x"}, utime: 40, start: 8},
		12: {comm: "bash", argv: []string{"bash"}, utime: 5, start: 9},
		// Exits inside the window: what it spent there is not seen.
		13: {comm: "karmada-search", argv: []string{"/bin/karmada-search", "/tmp/fleetA"}, utime: 30, start: 9},
		// Its pid is reused inside the window by another process.
		14: {comm: "etcd", argv: []string{"/tools/etcd", "--data-dir=/tmp/fleetB/etcd"}, utime: 900, start: 3},
	})
	after := fakeProc(t, map[int]fakeProcess{
		10: {comm: "kube-apiserver", argv: member, utime: 400, stime: 150, start: 7},
		11: {comm: "karmada-control", argv: []string{"/bin/karmada-controller-manager", "--kubeconfig=/tmp/fleetA/x"}, utime: 90, start: 8},
		12: {comm: "bash", argv: []string{"bash"}, utime: 6, start: 9},
		14: {comm: "etcd", argv: []string{"/tools/etcd", "--data-dir=/tmp/fleetB/etcd"}, utime: 20, start: 50},
		// Started inside the window: all of its time counts.
		15: {comm: "karmada-search", argv: []string{"/bin/karmada-search", "/tmp/fleetA"}, utime: 70, start: 60},
	})
	group := func(argv []string) string {
		cmd := strings.Join(argv, " ")
		switch {
		case strings.Contains(cmd, "/tmp/fleetA/") && strings.Contains(cmd, "/m0-"):
			return "member kube-apiservers"
		case strings.Contains(cmd, "/tmp/fleetA"):
			return filepath.Base(argv[0])
		case strings.Contains(cmd, "/tmp/fleetB"):
			return "the other fleet"
		}
		return ""
	}
	b, err := ReadProcCPU(before)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadProcCPU(after)
	if err != nil {
		t.Fatal(err)
	}
	got := CPUByGroup(b, a, group)
	want := map[string]time.Duration{
		"member kube-apiservers":     4 * time.Second, // (400+150) - (100+50) ticks
		"karmada-controller-manager": 500 * time.Millisecond,
		"karmada-search":             700 * time.Millisecond, // the new pid only
		"the other fleet":            200 * time.Millisecond, // the reused pid counts from zero
		"the rest of the machine":    10 * time.Millisecond,  // bash: no group
	}
	if !maps.Equal(got, want) {
		t.Errorf("CPUByGroup = %v, want %v", got, want)
	}
	if _, err := ReadProcCPU(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("reading a missing /proc gave no error")
	}
}

// A process that exits between listing /proc and reading it, or a
// kernel thread with an empty cmdline, is not an error: it is skipped or
// named by its comm.
func TestReadProcCPUSkipsVanishedAndKernelThreads(t *testing.T) {
	root := fakeProc(t, map[int]fakeProcess{20: {comm: "kworker/0:1", utime: 3}})
	if err := os.Mkdir(filepath.Join(root, "21"), 0o755); err != nil { // vanished: no stat
		t.Fatal(err)
	}
	got, err := ReadProcCPU(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Argv[0] != "[kworker/0:1]" || got[0].CPU != 30*time.Millisecond {
		t.Errorf("ReadProcCPU = %+v", got)
	}
}
