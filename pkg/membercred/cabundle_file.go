package membercred

import (
	"bytes"
	"context"
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
// (single flight, at most once per MinForcedRefreshInterval, waited for at
// most MaxReadWait). A kubelet Secret volume replaces the file by swapping
// its ..data symlink; reading the path follows it. A withdrawn certificate
// closes the connections, and a file without a usable certificate keeps
// the last good bundle.
//
// Reads run on their own goroutine and outside any lock: a stalled mount
// holds up one read, never a handshake past MaxReadWait, the next periodic
// check, Health, or a config being built. Every read is numbered when it
// starts, and only the outcome of a read that started after the one taken
// last is taken: a slow read never puts back an older bundle.
type CAFile struct {
	path  string
	trust *caTrust
	log   logr.Logger
	clock clock.PassiveClock

	// checkAt is when the file is next due, in UnixNano; reading mirrors
	// inFlight != nil for the request path.
	checkAt atomic.Int64
	reading atomic.Bool

	// mu guards the fields below; it is never held while the file is read.
	mu       sync.Mutex
	started  uint64    // reads numbered so far
	taken    uint64    // the number of the read whose outcome is current
	inFlight *fileRead // the background read under way, nil if none
	lastRead *fileRead // the background read completed last
	// lastReason, lastError and failures: see CAFileHealth.
	lastReason string
	lastError  string
	failures   int
}

// fileRead is one background read of the file; done is closed once its
// outcome is taken or dropped.
type fileRead struct {
	n         uint64
	done      chan struct{}
	completed time.Time
	// caRejected is the bundle whose verification failure started this
	// read, nil for a periodic one: only such a read answers a failure of
	// that bundle, as on the Secret path.
	caRejected *caSnapshot
	// slowReported makes "did not finish in time" one log line per read.
	slowReported atomic.Bool
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

// trustConfig reads the file for cfg, as client-go does when it builds the
// transport, and installs the bundle's verification, unless the file holds
// no usable bundle now. What it read becomes current only if no read that
// started after it was taken meanwhile.
func (f *CAFile) trustConfig(cfg *rest.Config) bool {
	f.mu.Lock()
	f.started++
	n := f.started
	f.mu.Unlock()
	raw, err := readCAFile(f.path)
	if err != nil {
		return false
	}
	snap, detail := parseCABundle(raw)
	if detail != "" {
		return false
	}
	f.mu.Lock()
	f.takeLocked(n, snap, "", "")
	f.mu.Unlock()
	f.trust.install(cfg, func(rt http.RoundTripper) http.RoundTripper {
		return &caFileRoundTripper{file: f, next: rt}
	})
	return true
}

func newCAFile(path string, log logr.Logger, clk clock.PassiveClock) *CAFile {
	f := &CAFile{path: path, log: log.WithValues("caFile", path), clock: clk}
	f.trust = newCATrust(f.afterFailure)
	return f
}

// caFileRoundTripper starts the periodic read; it costs a request one
// clock read and one or two atomic loads.
type caFileRoundTripper struct {
	file *CAFile
	next http.RoundTripper
}

func (rt *caFileRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	f := rt.file
	if f.clock.Now().UnixNano() >= f.checkAt.Load() && !f.reading.Load() {
		f.mu.Lock()
		if f.inFlight == nil && f.clock.Now().UnixNano() >= f.checkAt.Load() {
			f.launchLocked(nil)
		}
		f.mu.Unlock()
	}
	return rt.next.RoundTrip(req)
}

func (rt *caFileRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

// launchLocked starts a background read. Callers hold f.mu and have checked
// that none is under way.
func (f *CAFile) launchLocked(caRejected *caSnapshot) *fileRead {
	f.started++
	r := &fileRead{n: f.started, done: make(chan struct{}), caRejected: caRejected}
	f.inFlight = r
	f.reading.Store(true)
	f.checkAt.Store(f.clock.Now().Add(CAFileRefreshPeriod).UnixNano())
	go f.read(r)
	return r
}

// read reads the file for r and takes the outcome.
func (f *CAFile) read(r *fileRead) {
	raw, err := readCAFile(f.path)
	var snap *caSnapshot
	reason, detail := "", ""
	switch cur := f.trust.current.Load(); {
	case err != nil:
		reason, detail = ReasonCAFileUnreadable, err.Error()
	case cur != nil && bytes.Equal(cur.raw, raw):
		snap = cur // unchanged: nothing to parse
	default:
		if snap, detail = parseCABundle(raw); detail != "" {
			reason, detail = ReasonCABundleInvalid, "the file "+detail
		}
	}
	f.mu.Lock()
	f.takeLocked(r.n, snap, reason, detail)
	r.completed = f.clock.Now()
	f.lastRead = r
	f.inFlight = nil
	f.reading.Store(false)
	f.mu.Unlock()
	close(r.done)
}

// afterFailure answers a failed verification against failed with the bundle
// current after a read that a failure of failed started (coalesced, and at
// most one per MinForcedRefreshInterval), waiting for it at most
// MaxReadWait and never past ctx; failed when none completed in time.
func (f *CAFile) afterFailure(ctx context.Context, failed *caSnapshot) *caSnapshot {
	var dl readDeadline
	defer dl.stop()
	for range 3 {
		r, answers := f.failureRead(failed)
		if r != nil {
			select {
			case <-r.done:
			case <-ctx.Done():
				return failed
			case <-dl.expiry(f.clock, MaxReadWait):
				if r.slowReported.CompareAndSwap(false, true) {
					f.log.Error(nil, "Reading the CA file did not finish in time; handshakes waiting for it go on without it", "wait", MaxReadWait)
				}
				return failed
			}
		}
		if answers {
			return f.trust.current.Load()
		}
	}
	return failed
}

// failureRead returns the read that answers a failure of failed, and
// whether it does (see SecretTokenSource.startCAFailureRead); nil when
// none is needed.
func (f *CAFile) failureRead(failed *caSnapshot) (r *fileRead, answers bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.trust.current.Load() != failed {
		return nil, true
	}
	if f.inFlight != nil {
		return f.inFlight, f.inFlight.caRejected == failed
	}
	if lr := f.lastRead; lr != nil && lr.caRejected == failed && f.clock.Now().Sub(lr.completed) < MinForcedRefreshInterval {
		return nil, true
	}
	return f.launchLocked(failed), true
}

// takeLocked takes the outcome of read n unless a read that started after
// it was taken already, publishing its bundle or keeping the last good one,
// and logs once per change of state. Callers hold f.mu.
func (f *CAFile) takeLocked(n uint64, snap *caSnapshot, reason, detail string) {
	if n < f.taken {
		return
	}
	f.taken = n
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
	if f.trust.current.Load() == nil {
		f.trust.current.Store(snap)
		f.checkAt.Store(f.clock.Now().Add(CAFileRefreshPeriod).UnixNano())
		return
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
