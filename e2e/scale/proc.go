package scale

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat
// (sysconf(_SC_CLK_TCK)): 100 on every Linux architecture Go supports,
// and reading it would take cgo.
const clockTicks = 100

// ProcSample is one reading of a process's resident memory and CPU time.
type ProcSample struct {
	RSS int64         // bytes (VmRSS)
	CPU time.Duration // user + system
}

// ReadProc reads pid's /proc status and stat.
func ReadProc(pid int) (ProcSample, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcSample{}, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcSample{}, err
	}
	rss, err := ParseRSS(status)
	if err != nil {
		return ProcSample{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	cpu, err := ParseCPU(stat)
	if err != nil {
		return ProcSample{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return ProcSample{RSS: rss, CPU: cpu}, nil
}

// ParseRSS reads VmRSS (kB) from /proc/<pid>/status.
func ParseRSS(status []byte) (int64, error) {
	for _, line := range strings.Split(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want <n> kB", line)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS line %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line (a zombie has none)")
}

// ParseCPU reads utime + stime from /proc/<pid>/stat.
func ParseCPU(stat []byte) (time.Duration, error) {
	_, fields, err := splitStat(stat)
	if err != nil {
		return 0, err
	}
	return cpuOf(fields)
}

// splitStat splits a /proc/<pid>/stat into its command name (field 2) and
// the fields after it. The command name is in parentheses and may hold
// spaces or parentheses itself, so fields are counted from the last ')':
// fields[0] is the state (field 3), fields[i] field i+3.
func splitStat(stat []byte) (comm string, fields []string, err error) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("no command name in %q", stat)
	}
	return string(stat[open+1 : end]), strings.Fields(string(stat[end+1:])), nil
}

// cpuOf reads utime (field 14) and stime (15) from splitStat's fields.
func cpuOf(fields []string) (time.Duration, error) {
	if len(fields) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time field %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Meter follows one component across restarts (each a new pid) over a
// window: the CPU time it spent and the largest RSS seen.
type Meter struct {
	// first and last CPU time seen per pid; a pid first seen after the
	// window began counts from zero, since it was started inside it.
	first, last map[int]time.Duration
	started     bool
	PeakRSS     int64
	Samples     int
}

// Add records a sample of pid. The first call opens the window.
func (m *Meter) Add(pid int, s ProcSample) {
	if m.first == nil {
		m.first, m.last = map[int]time.Duration{}, map[int]time.Duration{}
	}
	if _, seen := m.first[pid]; !seen {
		if m.started {
			m.first[pid] = 0
		} else {
			m.first[pid] = s.CPU
		}
	}
	m.started = true
	m.last[pid] = s.CPU
	m.PeakRSS = max(m.PeakRSS, s.RSS)
	m.Samples++
}

// CPU is the CPU time spent in the window by every pid seen.
func (m *Meter) CPU() time.Duration {
	var sum time.Duration
	for pid, last := range m.last {
		sum += last - m.first[pid]
	}
	return sum
}

// LoadAverage is the 1-minute load average from /proc/loadavg.
func LoadAverage() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	return ParseLoadAverage(data)
}

// ParseLoadAverage reads the first field of /proc/loadavg.
func ParseLoadAverage(data []byte) (float64, error) {
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty /proc/loadavg")
	}
	return strconv.ParseFloat(fields[0], 64)
}

// heapAllocLine is the line of a Go heap profile in its debug=1 text form
// (runtime/pprof) that gives the bytes of live heap objects.
var heapAllocLine = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

// ParseHeapAlloc reads HeapAlloc from a heap profile in its debug=1 text
// form. Asked for with gc=1 (/debug/pprof/heap?gc=1&debug=1), the runtime
// collects garbage first, so it is the live heap: what the process's data
// holds, without the share of RSS that depends on where its collector and
// scavenger happened to stand.
func ParseHeapAlloc(profile []byte) (int64, error) {
	m := heapAllocLine.FindSubmatch(profile)
	if m == nil {
		return 0, fmt.Errorf("no %q line in the heap profile (%d bytes): not a Go heap profile in its debug=1 form", "# HeapAlloc = N", len(profile))
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// ProcCPU is one process's CPU time at a reading of /proc.
type ProcCPU struct {
	Pid int
	// Start is the process's start time (field 22 of stat, in clock
	// ticks since boot): with Pid, what tells a reused pid from the
	// process read before.
	Start int64
	// Argv is the command line; a kernel thread's, which is empty, is its
	// name in brackets, as ps shows it.
	Argv []string
	CPU  time.Duration
}

// ReadProcCPU reads the CPU time of every process under procRoot
// (normally /proc). A process that exits while it is read is left out:
// what it spent is not seen by any reading after it.
func ReadProcCPU(procRoot string) ([]ProcCPU, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var out []ProcCPU
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // exited
		}
		cpu, start, comm, err := parseStat(stat)
		if err != nil {
			return nil, fmt.Errorf("%s/stat: %w", dir, err)
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue // exited
		}
		argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		if len(cmdline) == 0 {
			argv = []string{"[" + comm + "]"}
		}
		out = append(out, ProcCPU{Pid: pid, Start: start, Argv: argv, CPU: cpu})
	}
	return out, nil
}

// parseStat reads the CPU time, the start time (field 22, clock ticks
// since boot) and the command name of a /proc/<pid>/stat.
func parseStat(stat []byte) (cpu time.Duration, start int64, comm string, err error) {
	comm, fields, err := splitStat(stat)
	if err != nil {
		return 0, 0, "", err
	}
	if cpu, err = cpuOf(fields); err != nil {
		return 0, 0, "", err
	}
	if len(fields) < 20 {
		return 0, 0, "", fmt.Errorf("%d fields after the command name, want at least 20", len(fields))
	}
	if start, err = strconv.ParseInt(fields[19], 10, 64); err != nil {
		return 0, 0, "", fmt.Errorf("start time field %q: %w", fields[19], err)
	}
	return cpu, start, comm, nil
}

// RestOfMachine is CPUByGroup's group for the processes group names none.
const RestOfMachine = "the rest of the machine"

// CPUByGroup is the CPU time each group of processes spent between two
// readings of /proc: a process in both counts its difference, one started
// in between all of its time (a reused pid is a new process). group names
// a process's group from its command line; "" is RestOfMachine. What a
// process that exited in between spent after the first reading is not
// seen (the restart workaround's old processes: their last moments).
func CPUByGroup(before, after []ProcCPU, group func(argv []string) string) map[string]time.Duration {
	type key struct {
		pid   int
		start int64
	}
	was := make(map[key]time.Duration, len(before))
	for _, p := range before {
		was[key{p.Pid, p.Start}] = p.CPU
	}
	out := map[string]time.Duration{}
	for _, p := range after {
		g := group(p.Argv)
		if g == "" {
			g = RestOfMachine
		}
		if d := p.CPU - was[key{p.Pid, p.Start}]; d > 0 {
			out[g] += d
		}
	}
	return out
}
