package membercred

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// CAFileRefreshPeriod is how often a CA file is read again: client-go
// re-reads a token file every minute, and a kubelet Secret volume swaps its
// ..data symlink within about that long of the Secret's update.
const CAFileRefreshPeriod = time.Minute

// ReasonCAFileUnreadable: the CA file could not be read (missing, no
// permission); the last good bundle is kept.
const ReasonCAFileUnreadable = "ca_file_unreadable"

// CAFile is a CA bundle read from a file (rest.Config.CAFile, such as a
// worker's HUB_CA_FILE on a Secret volume) that the connections of every
// config trusting it verify against, as a SecretTokenSource's bundle does
// for a Karmada member. client-go reads CAFile once per transport; this
// re-reads it at most CAFileRefreshPeriod after the previous read (started
// by the first request past it, in the background; no goroutine or timer
// lives between requests), and at once when a handshake fails verification
// (single flight, at most once per MinForcedRefreshInterval). A kubelet
// Secret volume replaces the file by swapping its ..data symlink; reading
// the path follows it. A withdrawn certificate closes the connections, and
// a file without a usable certificate keeps the last good bundle.
type CAFile struct {
	path  string
	trust *caTrust
	log   logr.Logger
	clock clock.PassiveClock

	// checkAt is when the file is next due, in UnixNano; reading is set
	// while a background read runs.
	checkAt atomic.Int64
	reading atomic.Bool

	// mu makes reads single flight; it guards the fields below.
	mu         sync.Mutex
	lastForced time.Time
	lastReason string
	lastError  string
	failures   int
}

// CAFileHealth is a snapshot of a CAFile, for a log line or a condition.
type CAFileHealth struct {
	Path string
	// LastError and LastErrorReason say why the last read's bundle was not
	// taken; Failures counts such reads in a row.
	LastError, LastErrorReason string
	Failures                   int
}

var caFiles sync.Map // path -> *CAFile

// TrustCAFile makes cfg verify its server against what cfg.TLSClientConfig.CAFile
// holds now rather than what it held when client-go built the transport.
// Every config naming one path shares one CAFile (and so one read and one
// set of connections to close). cfg is left as it is when it skips
// verification, carries CAData (which client-go prefers over the file),
// names no file, or names one that holds no usable bundle now (client-go
// then fails to build the client, as without this). The returned CAFile is
// nil then.
func TrustCAFile(cfg *rest.Config) *CAFile {
	tc := cfg.TLSClientConfig
	if tc.Insecure || tc.CAFile == "" || len(tc.CAData) != 0 {
		return nil
	}
	v, ok := caFiles.Load(tc.CAFile)
	if !ok {
		v, _ = caFiles.LoadOrStore(tc.CAFile, newCAFile(tc.CAFile, klog.Background(), clock.RealClock{}))
	}
	f := v.(*CAFile)
	if !f.trustConfig(cfg) {
		return nil
	}
	return f
}

// trustConfig reads the file for cfg and installs the bundle's
// verification, unless the file holds no usable bundle now.
func (f *CAFile) trustConfig(cfg *rest.Config) bool {
	raw, err := readCAFile(f.path)
	if err != nil {
		return false
	}
	snap, detail := parseCABundle(raw)
	if detail != "" {
		return false
	}
	f.adopt(snap)
	f.install(cfg)
	return true
}

func newCAFile(path string, log logr.Logger, clk clock.PassiveClock) *CAFile {
	f := &CAFile{path: path, log: log.WithValues("caFile", path), clock: clk}
	f.trust = newCATrust(f.afterFailure)
	return f
}

// adopt takes a bundle just read from the file: it is the newest there is.
func (f *CAFile) adopt(snap *caSnapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trust.set(snap)
	f.checkAt.Store(f.clock.Now().Add(CAFileRefreshPeriod).UnixNano())
}

// install puts the bundle's verification innermost in cfg's wrappers, and
// the periodic check in front of the transport.
func (f *CAFile) install(cfg *rest.Config) {
	host := cfg.Host
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if wrapped := f.trust.wrap(rt, host); wrapped != rt {
			rt = &caFileRoundTripper{file: f, next: wrapped}
		}
		if inner != nil {
			rt = inner(rt)
		}
		return rt
	}
}

// caFileRoundTripper starts the periodic read; it costs a request one
// clock read and one atomic load.
type caFileRoundTripper struct {
	file *CAFile
	next http.RoundTripper
}

func (rt *caFileRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	f := rt.file
	if f.clock.Now().UnixNano() >= f.checkAt.Load() && f.reading.CompareAndSwap(false, true) {
		go func() {
			defer f.reading.Store(false)
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.clock.Now().UnixNano() >= f.checkAt.Load() {
				f.readLocked()
			}
		}()
	}
	return rt.next.RoundTrip(req)
}

func (rt *caFileRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

// afterFailure answers a failed verification against failed with the bundle
// current after reading the file, or failed within the forced-read floor.
func (f *CAFile) afterFailure(failed *caSnapshot) *caSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur := f.trust.current.Load(); cur != failed {
		return cur
	}
	now := f.clock.Now()
	if !f.lastForced.IsZero() && now.Sub(f.lastForced) < MinForcedRefreshInterval {
		return failed
	}
	f.lastForced = now
	f.readLocked()
	return f.trust.current.Load()
}

// readLocked reads the file and publishes or refuses its bundle, logging
// once per change of state. Callers hold f.mu.
func (f *CAFile) readLocked() {
	f.checkAt.Store(f.clock.Now().Add(CAFileRefreshPeriod).UnixNano())
	raw, err := readCAFile(f.path)
	reason, detail := "", ""
	var snap *caSnapshot
	switch {
	case err != nil:
		reason, detail = ReasonCAFileUnreadable, err.Error()
	case f.trust.current.Load() != nil && bytes.Equal(f.trust.current.Load().raw, raw):
		snap = f.trust.current.Load() // unchanged: nothing to parse
	default:
		if snap, detail = parseCABundle(raw); detail != "" {
			reason, detail = ReasonCABundleInvalid, "the file "+detail
		}
	}
	prev := f.lastReason
	if reason != "" {
		f.lastReason, f.lastError = reason, detail
		f.failures++
		if reason != prev {
			f.log.Error(errors.New(detail), "Cannot take the CA bundle from its file; keeping the last good bundle", "reason", reason)
		}
		return
	}
	f.lastReason, f.lastError, f.failures = "", "", 0
	if prev != "" {
		f.log.Info("CA bundle file is usable again", "previousReason", prev)
	}
	if f.trust.set(snap) {
		f.log.Info("Picked up a changed CA bundle from its file", "certificates", len(snap.certs))
	}
}

// Health returns a snapshot of the file's state.
func (f *CAFile) Health() CAFileHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	return CAFileHealth{Path: f.path, LastError: f.lastError, LastErrorReason: f.lastReason, Failures: f.failures}
}

// readCAFile reads at most MaxCABundleBytes+1 bytes, so that a huge file
// is refused by parseCABundle without being read whole. Its error names
// the path and the failure, never content.
func readCAFile(path string) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading CA file: %w", err)
	}
	defer file.Close()
	raw, err := io.ReadAll(io.LimitReader(file, MaxCABundleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading CA file %s: %w", path, err)
	}
	return raw, nil
}
