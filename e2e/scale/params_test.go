package scale

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseKs(t *testing.T) {
	got, err := ParseKs("10, 50,100,")
	if err != nil || !slices.Equal(got, []int{10, 50, 100}) {
		t.Errorf("ParseKs = %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "0", "-3", "ten", "10,x"} {
		if _, err := ParseKs(bad); err == nil {
			t.Errorf("ParseKs(%q) gave no error", bad)
		}
	}
}

func TestParseStatusPeriod(t *testing.T) {
	for in, want := range map[string]time.Duration{"": UpstreamStatusPeriod, "2s": 2 * time.Second, " 1m ": time.Minute} {
		if got, err := ParseStatusPeriod(in); err != nil || got != want {
			t.Errorf("ParseStatusPeriod(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"10", "0s", "-2s", "soon", "500ms"} {
		_, err := ParseStatusPeriod(bad)
		if err == nil || !strings.Contains(err.Error(), StatusPeriodEnv) {
			t.Errorf("ParseStatusPeriod(%q) = %v, want an error naming %s", bad, err, StatusPeriodEnv)
		}
	}
}

func TestAPIServers(t *testing.T) {
	for k, want := range map[int]int{1: 1, 2: 2, 3: 3, 10: 3, 100: 3} {
		if got := APIServers(k, DefaultMemberAPIServers); got != want {
			t.Errorf("APIServers(%d) = %d, want %d", k, got, want)
		}
	}
	if got := APIServers(100, 10); got != 10 {
		t.Errorf("APIServers(100, 10) = %d", got)
	}
	for in, want := range map[string]int{"": DefaultMemberAPIServers, " 10 ": 10} {
		if got, err := ParseMemberAPIServers(in); err != nil || got != want {
			t.Errorf("ParseMemberAPIServers(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"0", "-1", "ten"} {
		if _, err := ParseMemberAPIServers(bad); err == nil || !strings.Contains(err.Error(), MemberAPIServersEnv) {
			t.Errorf("ParseMemberAPIServers(%q) = %v, want an error naming %s", bad, err, MemberAPIServersEnv)
		}
	}
}

func TestParallelBoundsAndJoins(t *testing.T) {
	var running, peak atomic.Int32
	errBoom := errors.New("boom")
	err := Parallel(20, 3, func(i int) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer running.Add(-1)
		if i == 7 {
			return errBoom
		}
		return nil
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Parallel lost the error: %v", err)
	}
	if peak.Load() > 3 {
		t.Errorf("%d ran at once, limit 3", peak.Load())
	}
	if err := Parallel(0, 3, func(int) error { return errBoom }); err != nil {
		t.Errorf("Parallel of nothing: %v", err)
	}
}

func TestParseControllerManagerFlags(t *testing.T) {
	got, err := ParseControllerManagerFlags("  --rate-limiter-qps=100   --kube-api-qps=400 ")
	if err != nil || !slices.Equal(got, []string{"--rate-limiter-qps=100", "--kube-api-qps=400"}) {
		t.Errorf("ParseControllerManagerFlags = %q, %v", got, err)
	}
	if got, err := ParseControllerManagerFlags(""); err != nil || got != nil {
		t.Errorf("empty = %q, %v; want none", got, err)
	}
	for bad, names := range map[string]string{
		"100":                                  "--name=value",
		"--rate-limiter-qps 100":               "--name=value",
		"--cluster-status-update-frequency=5s": "STATUS_PERIOD",
	} {
		_, err := ParseControllerManagerFlags(bad)
		if err == nil || !strings.Contains(err.Error(), ControllerManagerFlagsEnv) || !strings.Contains(err.Error(), names) {
			t.Errorf("ParseControllerManagerFlags(%q) = %v, want an error naming %s and %s", bad, err, ControllerManagerFlagsEnv, names)
		}
	}
}
