//go:build unix

package membercred

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// stallWithFIFO swaps the volume's ..data to a directory whose ca.crt is a
// FIFO (see stallDataWithFIFO). It returns the FIFO's path.
func (v *secretVolume) stallWithFIFO(t *testing.T) string {
	t.Helper()
	return stallDataWithFIFO(t, v.dir, fmt.Sprintf("..2026_12_04_%02d", v.gen.Add(1)), "ca.crt")
}

// stall swaps the volume's ..data to a directory whose file name is a FIFO
// (see stallDataWithFIFO). It returns the FIFO's path.
func (v *kubeconfigVolume) stall(t *testing.T, name string) string {
	t.Helper()
	v.gen++
	return stallDataWithFIFO(t, v.dir, fmt.Sprintf("..2026_12_05_%02d", v.gen), name)
}

// stallDataWithFIFO swaps the ..data of the kubelet volume in dir to a new
// directory data whose only file, name, is a FIFO: opening it blocks until
// a writer comes, as a read of a stalled mount does. It returns the FIFO's
// path.
func stallDataWithFIFO(t *testing.T, dir, data, name string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, data), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, data, name)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	swapData(t, dir, data)
	// Readers the test leaves blocked get EOF when it ends.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return fifo
}

// holdFIFOOpen waits until some reader opens the FIFO and then holds it
// open for writing without writing, so that the reader's read blocks until
// the test ends. A non-blocking open for writing fails with ENXIO while no
// reader has the FIFO open.
func holdFIFOOpen(t *testing.T, fifo string) *os.File {
	t.Helper()
	var w *os.File
	waitFor(t, "a read to open the stalled file", func() bool {
		var err error
		w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		return err == nil
	})
	t.Cleanup(func() { w.Close() })
	return w
}

// TestCAFileBuildingAConfigNeverPutsBackAnOlderBundle: a config built while
// a periodic read publishes a newer bundle must not put back the bundle it
// read before: the CA the file withdrew stays withdrawn.
func TestCAFileBuildingAConfigNeverPutsBackAnOlderBundle(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	clk := testingclock.NewFakeClock(time.Now())
	vol := newSecretVolume(t, bundle(oldCA, newCA))
	f := newCAFile(vol.path(), discardLogger(), clk)
	m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
	c := fileClient(t, f, m.URL, func(*testing.T, *rest.Config) {})
	if err := fetchOK(c, m.URL); err != nil {
		t.Fatal(err)
	}

	fifo := vol.stallWithFIFO(t)
	built := make(chan bool, 1)
	go func() {
		cfg := &rest.Config{Host: m.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: f.path}}
		built <- f.trustConfig(cfg) // opens the FIFO: it reads old+new once written
	}()
	w := holdFIFOOpen(t, fifo)

	vol.write(t, newCA.pem()) // the old CA is withdrawn
	clk.Step(CAFileRefreshPeriod)
	_ = fetchOK(c, m.URL) // starts the periodic read, which reads the new file
	waitFor(t, "the periodic read to publish the new bundle", func() bool {
		return bytes.Equal(f.trust.current.Load().raw, newCA.pem())
	})

	if _, err := w.Write(bundle(oldCA, newCA)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !<-built {
		t.Fatal("trustConfig refused a good file")
	}
	if got := f.trust.current.Load().raw; !bytes.Equal(got, newCA.pem()) {
		t.Fatalf("after building a config the bundle holds %d bytes, want the newer one (the withdrawn CA trusted again)", len(got))
	}
	clk.Step(MinForcedRefreshInterval)
	if err := fetchOK(c, m.URL); !isVerificationError(err) {
		t.Fatalf("with the old CA withdrawn: got %v, want a certificate verification error", err)
	}
}

// TestCAFileFailureWaitsAtMostMaxReadWait: a handshake whose verification
// failed waits for the file read it started at most MaxReadWait, as on the
// Secret path; a stalled mount hangs neither it, nor Health, nor the
// periodic read.
func TestCAFileFailureWaitsAtMostMaxReadWait(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	clk := testingclock.NewFakeClock(time.Now())
	vol := newSecretVolume(t, oldCA.pem())
	f := newCAFile(vol.path(), discardLogger(), clk)
	m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
	c := fileClient(t, f, m.URL, func(*testing.T, *rest.Config) {})
	if err := fetchOK(c, m.URL); err != nil {
		t.Fatal(err)
	}

	fifo := vol.stallWithFIFO(t)
	m.restartWith(newCA.serving(t, leafOpts{}))
	done := make(chan error, 1)
	go func() { done <- fetchOK(c, m.URL) }()
	holdFIFOOpen(t, fifo)
	waitFor(t, "the handshake to wait on the clock", clk.HasWaiters)
	health := make(chan CAFileHealth, 2)
	go func() { health <- f.Health() }()
	waitFor(t, "Health with a read stalled", func() bool { return len(health) == 1 })
	clk.Step(MaxReadWait)
	if err := <-done; !isVerificationError(err) {
		t.Fatalf("after MaxReadWait with the read still stalled: got %v, want the verification error", err)
	}

	// Past the period the request that notices starts no second read
	// behind the stalled one, and Health still answers.
	clk.Step(CAFileRefreshPeriod)
	go func() { done <- fetchOK(c, m.URL) }()
	waitFor(t, "the handshake to wait on the clock again", clk.HasWaiters)
	clk.Step(MaxReadWait)
	if err := <-done; !isVerificationError(err) {
		t.Fatalf("past the period with the read still stalled: got %v, want the verification error", err)
	}
	go func() { health <- f.Health() }()
	waitFor(t, "Health with a read stalled", func() bool { return len(health) == 2 })
}
