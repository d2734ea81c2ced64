package membercred

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// KubeconfigRereadPeriod is how often the kubeconfig and the files it
	// names are read again even when no stat shows a change: client-go
	// re-reads a token file every minute (its fileTokenSource, reasoned on
	// the kubelet refreshing projected tokens at 80% of their lifetime),
	// and an in-place write can keep a file's size and mtime.
	KubeconfigRereadPeriod = time.Minute

	// KubeconfigChangeCheckInterval is how often a request may start a stat
	// of those files (never a read) to notice a kubelet Secret volume
	// swapping its ..data symlink: a stat is a few microseconds, once a
	// second, on a goroutine of its own.
	KubeconfigChangeCheckInterval = time.Second
)

// KubeconfigOptions configure RestConfigFromKubeconfig. The zero value is
// ready to use.
type KubeconfigOptions struct {
	// Name labels logs and metrics: the member cluster's name for a
	// scheduler-estimator, the control plane's for an agent. Empty means
	// the kubeconfig's path.
	Name string
	// Metrics records reads and 401 handling. nil records nothing.
	Metrics *KubeconfigMetrics
	// Logger receives state changes (never per request). The zero value
	// means klog.Background().
	Logger logr.Logger
	// Clock tells the time; nil means the real clock. Tests pass a fake one.
	Clock clock.PassiveClock
	// Context is the kubeconfig context whose credential is followed, as a
	// --context flag gives it (karmada-agent's --karmada-context); empty
	// means the file's current-context, read anew with the rest.
	Context string
}

// KubeconfigCredential is the credential a kubeconfig file holds now: the
// bearer token (inline or tokenFile), the client certificate and key
// (inline or files) and the certificate authority (inline or file) of its
// current context. Requests and new TLS connections of every client built
// from its rest.Config use what the files hold now, not what they held when
// the process started:
//
//   - the files are stat'ed at most every KubeconfigChangeCheckInterval and
//     read again when a stat shows a change (a kubelet Secret volume swaps
//     ..data), and at least every KubeconfigRereadPeriod; both started by a
//     request, in the background (stale-while-revalidate: no request waits
//     for them, and no goroutine or timer lives between requests);
//   - a 401, a handshake the current CA does not verify, or a TLS alert from
//     the server makes the files be read at once: single flight, at most one
//     such read per MinForcedRefreshInterval, a request waiting at most
//     MaxReadWait for it; a 401'd request is replayed once with the new
//     credential when replayable (replay.go's rule), else returned as it
//     came;
//   - connections opened with a client certificate the file no longer
//     holds, or verified by a CA it withdrew, are closed
//     (k8s.io/client-go/util/connrotation);
//   - a read that yields no usable credential keeps the last good one, and
//     says so once in the log, in Health and on the usable gauge.
//
// What it draws on, and where it goes beyond client-go: clientcmd decodes
// the file and sets every non-credential field of the config
// (BuildConfigFromFlags); client-go's transport follows a tokenFile
// (NewCachedFileTokenSource, every minute) and client certificate FILES
// (cert_rotation.go's dynamicClientCert, read on every handshake, compared
// every 5 minutes), but neither an inline token, inline certificate data or
// a CA, nor any of them at once on a 401 or a TLS failure, and its token
// cache holds its lock while the file is read. The CA follows the rules of
// the member Secret's bundle (caTrust); the 401 replay is the member
// token's (replayable).
type KubeconfigCredential struct {
	path    string
	context string // KubeconfigOptions.Context
	name    string
	server  string // of the first read: a running client keeps its host
	log     logr.Logger
	clock   clock.PassiveClock
	metrics *KubeconfigMetrics

	// current is the hot path: requests load it without a lock. Never nil.
	current atomic.Pointer[kubeconfigSnapshot]
	// trust is the CA connections verify against; nil when the first read
	// named none (system roots) or skipped verification.
	trust *caTrust
	// tracker holds every connection the clients of this credential
	// dialled; a new client certificate closes them.
	tracker *connrotation.ConnectionTracker

	checkAt      atomic.Int64 // UnixNano of the next stat check
	persisted401 atomic.Int64
	readWait     time.Duration

	// mu makes reads single flight and guards the fields below; it is
	// never held while a file is read.
	mu         sync.Mutex
	inFlight   *credentialRead
	lastForced *credentialRead
	paths      []string    // the files of the last usable read
	stamps     []fileStamp // their stat before the last read
	rereadAt   time.Time
	lastRead   time.Time
	lastError  string
	lastReason string
	failures   int
	serverSeen string

	tlsMu   sync.Mutex
	tlsLast tlsWrapped
}

// kubeconfigSnapshot is one usable credential, immutable once published.
type kubeconfigSnapshot struct {
	token  string // "" sends no Authorization header
	header string // "Bearer " + token, built once per read
	cert   *tls.Certificate
}

// credentialRead is one read of the files. rejected is the snapshot whose
// 401 or TLS failure started it, nil for a periodic one: only a read a
// rejection of the same snapshot started may answer it.
type credentialRead struct {
	done      chan struct{}
	rejected  *kubeconfigSnapshot
	completed time.Time
}

var readDone = func() *credentialRead {
	r := &credentialRead{done: make(chan struct{})}
	close(r.done)
	return r
}()

var kubeconfigCredentials sync.Map // absolute path + "\x00" + context -> *KubeconfigCredential

// RestConfigFromKubeconfig is clientcmd.BuildConfigFromFlags("", path)
// whose clients follow the credential the file holds now. With a file that
// never changes, the config is the one BuildConfigFromFlags returns (Host,
// TLS, QPS, Burst, timeouts, proxy, impersonation) and so is every error for
// a bad file; the differences are that BearerToken and BearerTokenFile are
// empty (the token is put on each request by WrapTransport, which the
// config carries) and that the transport's client certificate and roots come
// from the credential. Every config built for one path shares one
// KubeconfigCredential (one read, one set of connections); the options of
// the first call are kept.
//
// The config is returned exactly as BuildConfigFromFlags built it, and
// nothing is followed, when path is empty (the in-cluster config, whose
// token file client-go already follows), when its user authenticates with an
// exec plugin, an auth provider or basic auth (client-go's own), or when the
// file cannot be read as KubeconfigCredential requires although clientcmd
// accepted it (a line in the log says why).
func RestConfigFromKubeconfig(path string, opts KubeconfigOptions) (*rest.Config, error) {
	cfg, err := buildConfig(path, opts.Context)
	if err != nil || path == "" {
		return cfg, err
	}
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.Username != "" || cfg.Password != "" {
		return cfg, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return cfg, nil // BuildConfigFromFlags read it; nothing to follow by
	}
	k, err := credentialFor(abs, opts)
	if err != nil {
		logger(opts).Error(err, "Cannot follow the credential of this kubeconfig; its clients keep the one read at start", "kubeconfig", abs)
		return cfg, nil
	}
	k.Install(cfg)
	return cfg, nil
}

// buildConfig is clientcmd.BuildConfigFromFlags("", path), with context
// in place of the file's current-context when set, as a --context flag
// sets it (karmada's apiclient.RestConfig).
func buildConfig(path, context string) (*rest.Config, error) {
	if context == "" || path == "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}

func logger(opts KubeconfigOptions) logr.Logger {
	if opts.Logger.GetSink() == nil {
		return klog.Background()
	}
	return opts.Logger
}

func credentialFor(abs string, opts KubeconfigOptions) (*KubeconfigCredential, error) {
	key := abs + "\x00" + opts.Context
	if v, ok := kubeconfigCredentials.Load(key); ok {
		return v.(*KubeconfigCredential), nil
	}
	k, err := NewKubeconfigCredential(abs, opts)
	if err != nil {
		return nil, err
	}
	v, _ := kubeconfigCredentials.LoadOrStore(key, k)
	return v.(*KubeconfigCredential), nil
}

// NewKubeconfigCredential reads the kubeconfig at path and the files it
// names. Its error says why the file cannot be followed (see
// RestConfigFromKubeconfig); nothing is retried then.
func NewKubeconfigCredential(path string, opts KubeconfigOptions) (*KubeconfigCredential, error) {
	if opts.Name == "" {
		opts.Name = path
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	read, kerr := readKubeconfigCredential(path, opts.Context)
	if kerr != nil {
		return nil, fmt.Errorf("kubeconfig %s %s", path, kerr.detail)
	}
	k := &KubeconfigCredential{
		path:     path,
		context:  opts.Context,
		name:     opts.Name,
		server:   read.spec.server,
		log:      logger(opts).WithValues("kubeconfig", opts.Name),
		clock:    clk,
		metrics:  opts.Metrics,
		readWait: MaxReadWait,
		tracker:  connrotation.NewConnectionTracker(),
	}
	if read.ca != nil {
		k.trust = newCATrust(k.afterCAFailure)
		k.trust.tracker = k.tracker
		k.trust.set(read.ca)
	}
	now := clk.Now()
	k.current.Store(newKubeconfigSnapshot(read))
	k.paths = read.watchedPaths(path)
	k.stamps = stampsOf(k.paths)
	k.rereadAt = now.Add(KubeconfigRereadPeriod)
	k.lastRead = now
	k.serverSeen = read.spec.server
	k.checkAt.Store(now.Add(KubeconfigChangeCheckInterval).UnixNano())
	k.metrics.read(k.name, now)
	return k, nil
}

func newKubeconfigSnapshot(r *kubeconfigRead) *kubeconfigSnapshot {
	s := &kubeconfigSnapshot{token: r.token, cert: r.cert}
	if r.token != "" {
		s.header = "Bearer " + r.token
	}
	return s
}

// Install makes cfg's clients use this credential: BearerToken and
// BearerTokenFile are cleared (client-go's bearer wrapper sits outside
// WrapTransport and would set the frozen token first), the token wrapper is
// added outermost and the TLS part innermost, below any wrapper cfg already
// has (one that type-asserts *http.Transport keeps seeing one). cfg's
// CAData, CAFile, CertData and the rest stay: client-go builds its base
// transport and its upgrade round trippers (exec, port-forward) from them
// as upstream does.
func (k *KubeconfigCredential) Install(cfg *rest.Config) {
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	host := cfg.Host
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = k.wrapTLS(rt, host)
		if inner != nil {
			rt = inner(rt)
		}
		return rt
	}
	cfg.Wrap(k.WrapTransport)
}

// maybeCheck starts a stat of the files when one is due; it costs a request
// one clock read and one atomic load.
func (k *KubeconfigCredential) maybeCheck() {
	now := k.clock.Now().UnixNano()
	if now < k.checkAt.Load() {
		return
	}
	k.checkAt.Store(now + int64(KubeconfigChangeCheckInterval))
	k.mu.Lock()
	if k.inFlight == nil {
		k.launch(nil)
	}
	k.mu.Unlock()
}

// launch starts a read on its own goroutine. Callers hold k.mu and have
// checked that none is under way.
func (k *KubeconfigCredential) launch(rejected *kubeconfigSnapshot) *credentialRead {
	r := &credentialRead{done: make(chan struct{}), rejected: rejected}
	k.inFlight = r
	go k.run(r)
	return r
}

// run is one read: a periodic one reads only when a stat shows a change or
// KubeconfigRereadPeriod has passed; a forced one always reads.
func (k *KubeconfigCredential) run(r *credentialRead) {
	k.mu.Lock()
	paths := k.paths
	prevStamps := k.stamps
	due := !k.clock.Now().Before(k.rereadAt)
	k.mu.Unlock()

	stamps := stampsOf(paths) // before the read: a change after it is seen next time
	if r.rejected != nil || due || !stampsEqual(stamps, prevStamps) {
		read, kerr := readKubeconfigCredential(k.path, k.context)
		if kerr == nil {
			kerr = k.publish(read)
		}
		now := k.clock.Now()
		k.mu.Lock()
		k.stamps, k.rereadAt = stamps, now.Add(KubeconfigRereadPeriod)
		if kerr == nil {
			k.paths = read.watchedPaths(k.path)
			if !slices.Equal(k.paths, paths) {
				k.stamps = stampsOf(k.paths)
			}
		}
		k.mu.Unlock()
		k.record(kerr, now)
	}

	k.mu.Lock()
	r.completed = k.clock.Now()
	if r.rejected != nil {
		k.lastForced = r
	}
	k.inFlight = nil
	k.mu.Unlock()
	close(r.done)
}

// publish takes a usable read. A part the first read did not have is not
// followed (a client's transport is built for what it had: a CA appearing
// in a kubeconfig that had none would change which roots are trusted); a
// followed CA that disappears is refused.
func (k *KubeconfigCredential) publish(read *kubeconfigRead) *kubeconfigError {
	if k.trust != nil && read.ca == nil {
		return refuse(ReasonCABundleMissing, "no longer names a certificate authority (or now skips verification); the connections keep verifying against the last one")
	}
	prev := k.current.Load()
	next := newKubeconfigSnapshot(read)
	if next.token == prev.token && certsEqual(next.cert, prev.cert) {
		next = prev // unchanged: no replay, no closed connection
	}
	k.current.Store(next)
	caChanged := k.trust != nil && k.trust.set(read.ca)
	certChanged := !certsEqual(prev.cert, next.cert)
	if certChanged {
		// What client-go's dynamicClientCert does when its files change:
		// connections authenticated by the old certificate keep it for
		// their life, so they are closed; informers re-watch from their
		// resourceVersion.
		k.tracker.CloseAll()
	}
	if next.token != prev.token {
		k.log.Info("Picked up a rotated bearer token from the kubeconfig")
	}
	if certChanged {
		k.log.Info("Picked up a rotated client certificate from the kubeconfig; closed the connections opened with the previous one")
	}
	if caChanged {
		k.log.Info("Picked up a changed certificate authority from the kubeconfig", "certificates", len(k.trust.current.Load().certs))
	}
	if read.spec.server != k.serverSeen {
		k.serverSeen = read.spec.server // only run writes it
		if read.spec.server != k.server {
			k.log.Info("The kubeconfig names another server; running clients keep the one they were built with until the process restarts", "server", read.spec.server, "inUse", k.server)
		}
	}
	return nil
}

// record keeps the outcome of a read for Health, the metrics and one log
// line per change of state.
func (k *KubeconfigCredential) record(kerr *kubeconfigError, now time.Time) {
	k.mu.Lock()
	prev := k.lastReason
	if kerr != nil {
		k.lastError, k.lastReason = "kubeconfig "+k.path+" "+kerr.detail, kerr.reason
		k.failures++
	} else {
		k.lastError, k.lastReason, k.failures = "", "", 0
		k.lastRead = now
	}
	k.mu.Unlock()
	if kerr != nil {
		k.metrics.failed(k.name, kerr.reason)
		if kerr.reason != prev {
			k.log.Error(errors.New(kerr.detail), "Cannot take the credential from the kubeconfig file; keeping the last good credential", "reason", kerr.reason, "path", k.path)
		}
		return
	}
	k.metrics.read(k.name, now)
	if prev != "" {
		k.log.Info("The kubeconfig file holds a usable credential again", "previousReason", prev)
	}
}

// afterRejection returns the credential to retry with after sent was
// rejected (a 401, a TLS failure): one another request already read, or
// what a read started after the rejection found (coalesced with every
// request rejected with sent). It waits at most k.readWait in all.
func (k *KubeconfigCredential) afterRejection(ctx context.Context, sent *kubeconfigSnapshot) (*kubeconfigSnapshot, error) {
	var timeout <-chan time.Time
	for range 3 {
		read, answers := k.startForcedRead(sent)
		select {
		case <-read.done:
		default:
			if timeout == nil {
				t := time.NewTimer(k.readWait)
				defer t.Stop()
				timeout = t.C
			}
			select {
			case <-read.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-timeout:
				return nil, fmt.Errorf("no read of kubeconfig %s completed within %s", k.path, k.readWait)
			}
		}
		if answers {
			return k.current.Load(), nil
		}
	}
	return nil, errNoVerdict
}

// startForcedRead returns the read that answers a rejection of sent, and
// whether it does (see SecretTokenSource.startUnauthorizedRead, whose rules
// these are).
func (k *KubeconfigCredential) startForcedRead(sent *kubeconfigSnapshot) (*credentialRead, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current.Load() != sent {
		return readDone, true
	}
	if k.inFlight != nil {
		return k.inFlight, k.inFlight.rejected == sent
	}
	if lf := k.lastForced; lf != nil && lf.rejected == sent && k.clock.Now().Sub(lf.completed) < MinForcedRefreshInterval {
		return lf, true
	}
	return k.launch(sent), true
}

// afterCAFailure answers caTrust when a handshake failed verification
// against failed: the CA current after reading the files at once, waited
// for as afterRejection waits and never past ctx (the dial's, bounded by
// its handshake timeout); failed when no such read completed in time, as
// SecretTokenSource.caAfterFailure answers, so that the dial returns its
// verification error as upstream's does.
func (k *KubeconfigCredential) afterCAFailure(ctx context.Context, failed *caSnapshot) *caSnapshot {
	if cur := k.trust.current.Load(); cur != failed {
		return cur
	}
	if _, err := k.afterRejection(ctx, k.current.Load()); err != nil {
		return failed
	}
	return k.trust.current.Load()
}

// notePersisted401 records a 401 that persisted after a fresh read, logging
// once when such a run starts.
func (k *KubeconfigCredential) notePersisted401() {
	k.metrics.persisted(k.name)
	if k.persisted401.Add(1) == 1 {
		k.log.Error(nil, "The server rejects the credential of the kubeconfig (401 Unauthorized) and re-reading the file gave no other; write a valid credential into it")
	}
}

// noteRecovered records a request replayed after a 401 and accepted.
func (k *KubeconfigCredential) noteRecovered() {
	k.metrics.recovered(k.name)
	k.noteAccepted()
}

func (k *KubeconfigCredential) noteAccepted() {
	if k.persisted401.Load() == 0 {
		return
	}
	if n := k.persisted401.Swap(0); n != 0 {
		k.log.Info("The server accepts the credential of the kubeconfig again", "persisted401s", n)
	}
}

// KubeconfigHealth is a snapshot of a KubeconfigCredential, for a log line
// or a condition. It never contains the credential.
type KubeconfigHealth struct {
	Path, Name string
	// LastRead is when the files last yielded a usable credential.
	LastRead time.Time
	// LastError and LastErrorReason say why the last read was refused;
	// ConsecutiveReadFailures counts such reads. The last good credential
	// stays in use meanwhile.
	LastError, LastErrorReason string
	ConsecutiveReadFailures    int
	// ConsecutivePersisted401s counts 401s that persisted after re-reading
	// the files, with no other response in between.
	ConsecutivePersisted401s int
	// FollowsCA is true when connections verify against the CA the file
	// holds now (the first read named one).
	FollowsCA bool
}

// Health returns a snapshot of the credential's state.
func (k *KubeconfigCredential) Health() KubeconfigHealth {
	k.mu.Lock()
	defer k.mu.Unlock()
	return KubeconfigHealth{
		Path: k.path, Name: k.name, LastRead: k.lastRead,
		LastError: k.lastError, LastErrorReason: k.lastReason, ConsecutiveReadFailures: k.failures,
		ConsecutivePersisted401s: int(k.persisted401.Load()),
		FollowsCA:                k.trust != nil,
	}
}

// Err summarises h as an error, nil when the credential is usable and
// accepted.
func (h KubeconfigHealth) Err() error {
	switch {
	case h.ConsecutivePersisted401s > 0:
		return fmt.Errorf("the server rejects the credential in kubeconfig %s (%d consecutive 401 Unauthorized after re-reading it)", h.Path, h.ConsecutivePersisted401s)
	case h.LastError != "":
		return fmt.Errorf("keeping the last good credential; %d reads in a row refused: %s", h.ConsecutiveReadFailures, h.LastError)
	}
	return nil
}

// certsEqual is client-go's comparison of client certificates
// (transport/cert_rotation.go, unexported there): the chain and the key.
func certsEqual(a, b *tls.Certificate) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Certificate) != len(b.Certificate) {
		return false
	}
	for i := range a.Certificate {
		if !bytes.Equal(a.Certificate[i], b.Certificate[i]) {
			return false
		}
	}
	type equaler interface{ Equal(crypto.PrivateKey) bool }
	if ka, ok := a.PrivateKey.(equaler); ok {
		return ka.Equal(b.PrivateKey)
	}
	return false
}
