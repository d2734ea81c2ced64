package membercred

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// secretVolume is a directory laid out as a kubelet Secret volume: the
// file is a symlink through ..data, which the kubelet swaps atomically to a
// new timestamped directory when the Secret changes.
type secretVolume struct {
	dir string
	gen atomic.Int64
}

func newSecretVolume(t *testing.T, caBundle []byte) *secretVolume {
	t.Helper()
	v := &secretVolume{dir: t.TempDir()}
	v.write(t, caBundle)
	if err := os.Symlink(filepath.Join("..data", "ca.crt"), filepath.Join(v.dir, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *secretVolume) path() string { return filepath.Join(v.dir, "ca.crt") }

// write publishes caBundle as the kubelet does: a new directory, a new
// ..data symlink beside the old one, renamed over it.
func (v *secretVolume) write(t *testing.T, caBundle []byte) {
	t.Helper()
	n := v.gen.Add(1)
	data := fmt.Sprintf("..2026_12_04_%02d", n)
	if err := os.Mkdir(filepath.Join(v.dir, data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.dir, data, "ca.crt"), caBundle, 0o644); err != nil {
		t.Fatal(err)
	}
	swapData(t, v.dir, data)
}

// swapData points the ..data symlink of the volume in dir at data as the
// kubelet does: a new symlink beside the old one, renamed over it, so that a
// reader sees the old folder or the new one, never a mix.
func swapData(t testing.TB, dir, data string) {
	t.Helper()
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(data, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// fileClient builds a hub client as the worker does (CAFile, token file)
// through a CAFile with a fake clock.
func fileClient(t *testing.T, f *CAFile, host string, path func(*testing.T, *rest.Config)) *http.Client {
	t.Helper()
	cfg := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAFile: f.path}}
	if !f.trustConfig(cfg) {
		t.Fatal("trustConfig refused a good file")
	}
	path(t, cfg)
	return httpClient(t, cfg)
}

// TestCAFileFollowsSecretVolumeSwap: the hub restarts with a certificate
// from a new CA and the kubelet swaps the CA file; the same client
// recovers on its next request, through the read its failed handshake
// starts.
func TestCAFileFollowsSecretVolumeSwap(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			vol := newSecretVolume(t, oldCA.pem())
			var logs logLines
			f := newCAFile(vol.path(), logs.logger(), clk)
			m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
			c := fileClient(t, f, m.URL, p.setup)
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatal(err)
			}

			m.restartWith(newCA.serving(t, leafOpts{}))
			if err := fetchOK(c, m.URL); !isVerificationError(err) {
				t.Fatalf("before the file changes: got %v, want a certificate verification error", err)
			}
			vol.write(t, newCA.pem())
			clk.Step(MinForcedRefreshInterval)
			err := fetchOK(c, m.URL)
			if p.name == "proxied" && err != nil { // see TestCABundleReplacedAfterSwitch
				err = fetchOK(c, m.URL)
			}
			if err != nil {
				t.Fatalf("after the kubelet swapped the CA file: %v", err)
			}
			if got := len(logs.containing("Picked up a changed CA bundle from its file")); got != 1 {
				t.Errorf("%d change lines, want 1: %q", got, logs.all())
			}
		})
	}
}

// TestCAFilePeriodicReadClosesWithdrawnCA: a minute after the last read, a
// request reads the file in the background; a bundle that withdrew the
// serving CA closes the connections, and the next handshake fails.
func TestCAFilePeriodicReadClosesWithdrawnCA(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	clk := testingclock.NewFakeClock(time.Now())
	vol := newSecretVolume(t, bundle(oldCA, newCA))
	f := newCAFile(vol.path(), discardLogger(), clk)
	m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
	c := fileClient(t, f, m.URL, func(*testing.T, *rest.Config) {})
	if err := fetchOK(c, m.URL); err != nil {
		t.Fatal(err)
	}
	vol.write(t, newCA.pem())
	clk.Step(CAFileRefreshPeriod - time.Second)
	if err := fetchOK(c, m.URL); err != nil {
		t.Fatal(err)
	}
	if m.closed.Load() != 0 {
		t.Fatal("connections closed before the period was up")
	}
	clk.Step(time.Second)
	_ = fetchOK(c, m.URL) // starts the read
	waitFor(t, "the connections verified by the withdrawn CA to be closed", func() bool {
		return m.closed.Load() == m.accepted.Load()
	})
	clk.Step(MinForcedRefreshInterval)
	if err := fetchOK(c, m.URL); !isVerificationError(err) {
		t.Fatalf("with the old CA withdrawn: got %v, want a certificate verification error", err)
	}
}

// TestCAFileBadContentKeepsLastGood: a file without a usable certificate,
// or no file at all, keeps the last good bundle, with one log line per
// change of state and none of the content.
func TestCAFileBadContentKeepsLastGood(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	for name, c := range map[string]struct {
		breakIt func(*testing.T, *secretVolume)
		reason  string
	}{
		"garbage": {func(t *testing.T, v *secretVolume) { v.write(t, []byte("-----BEGIN garbage")) }, ReasonCABundleInvalid},
		"removed": {func(t *testing.T, v *secretVolume) { v.write(t, nil); _ = os.Remove(v.path()) }, ReasonCAFileUnreadable},
	} {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			vol := newSecretVolume(t, ca.pem())
			var logs logLines
			f := newCAFile(vol.path(), logs.logger(), clk)
			m := newTLSMember(t, ca.serving(t, leafOpts{}), false)
			client := fileClient(t, f, m.URL, func(*testing.T, *rest.Config) {})
			c.breakIt(t, vol)
			for range 2 {
				clk.Step(CAFileRefreshPeriod)
				_ = fetchOK(client, m.URL)
				waitFor(t, "the periodic read", func() bool { return !f.reading.Load() && f.Health().Failures > 0 })
			}
			waitFor(t, "two failed reads", func() bool { return f.Health().Failures == 2 })
			m.CloseClientConnections()
			if err := fetchOK(client, m.URL); err != nil {
				t.Fatalf("with the last good bundle: %v", err)
			}
			if h := f.Health(); h.LastErrorReason != c.reason {
				t.Fatalf("Health = %+v, want reason %s", h, c.reason)
			}
			if got := len(logs.containing(c.reason)); got != 1 {
				t.Fatalf("%d lines with %s, want 1: %q", got, c.reason, logs.all())
			}
			for _, line := range logs.all() {
				if strings.Contains(line, "BEGIN") {
					t.Fatalf("a log line quotes the file: %q", line)
				}
			}
		})
	}
}

// TestTrustCAFileLeavesOtherConfigsAlone: configs client-go would not read
// a CA file for, or whose file holds no bundle now, are not wrapped.
func TestTrustCAFileLeavesOtherConfigsAlone(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]rest.TLSClientConfig{
		"insecure":     {Insecure: true, CAFile: garbage},
		"CAData wins":  {CAData: []byte("x"), CAFile: garbage},
		"no file":      {},
		"missing file": {CAFile: filepath.Join(dir, "missing")},
		"garbage file": {CAFile: garbage},
	} {
		cfg := &rest.Config{Host: "https://hub:6443", TLSClientConfig: tc}
		if f := TrustCAFile(cfg); f != nil || cfg.WrapTransport != nil {
			t.Errorf("%s: wrapped", name)
		}
	}
}
