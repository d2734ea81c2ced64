package scale

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
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
