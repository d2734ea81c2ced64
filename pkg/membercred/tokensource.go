package membercred

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/oauth2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// ErrNoToken is wrapped by the error a request gets when no token has ever
// been read for its member cluster. Such a request is not sent: an
// unauthenticated request would only add a misleading 401 or, worse, succeed
// as system:anonymous.
var ErrNoToken = errors.New("no bearer token")

// SecretTokenSource serves the bearer token of one member cluster from its
// Secret. It is safe for concurrent use and owns no goroutine between
// requests: an expired token is refreshed by a short-lived goroutine started
// by the request that notices, while every request keeps using the cached
// (stale) token; only with no token cached do requests wait for a read.
type SecretTokenSource struct {
	cluster   string
	namespace string
	name      string
	secretRef string // "namespace/name", for messages
	// getter is swapped by Registry.Source for the newest caller's.
	getter  atomic.Pointer[SecretGetter]
	period  time.Duration
	metrics *Metrics
	log     logr.Logger
	clock   clock.PassiveClock

	// current is the hot path: requests load it without any lock. It is nil
	// until a token is known and never goes back to nil.
	current atomic.Pointer[cachedToken]
	// reading mirrors inFlight != nil so that requests carrying a stale
	// token skip the mutex while a refresh is already under way.
	reading atomic.Bool
	// persisted401 counts 401s that persisted after a fresh read, with no
	// other response in between. Atomic: every accepted response checks it.
	persisted401 atomic.Int64

	// mu guards the fields below. It is never held while the getter runs,
	// which is the difference from client-go's cachingTokenSource.
	mu          sync.Mutex
	inFlight    *secretRead // the read under way, nil if none
	lastRead    *secretRead // the most recently completed read
	lastRefresh time.Time
	lastError   string
	lastReason  string
	failures    int
	// seen holds the token values read from the Secret (or given as
	// InitialToken), newest last, at most maxSeenTokens: error text from the
	// getter is scrubbed of each of them before it is logged or kept.
	seen []string

	// caError, caReason and caFailures are the CA bundle's counterparts of
	// lastError, lastReason and failures.
	caError    string
	caReason   string
	caFailures int

	// readWait bounds how long a request waits for a Secret read: after a
	// 401, or with no token cached. MaxReadWait; tests shorten it.
	readWait time.Duration

	// ca is the member's CA bundle, taken from the same reads as the token
	// once TrustSecretCABundle gave it a first one (before that its current
	// is nil and reads leave the bundle alone).
	ca *caTrust
	// caMu orders what publishes a bundle (a read's outcome, a config's
	// bundle); caGen counts the configs that brought another bundle than
	// the current one. Neither is touched on the request path.
	caMu  sync.Mutex
	caGen atomic.Uint64
	// caOff is set while the cluster's configs skip verification.
	caOff atomic.Bool
}

// cachedToken is an immutable snapshot published through an atomic pointer.
type cachedToken struct {
	token string
	// header is "Bearer " + token, built once per read so that the request
	// path does not concatenate (and allocate) per request.
	header string
	// refreshAt is when the Secret should be read again; past it the token
	// is still served while one background read runs.
	refreshAt time.Time
}

func newCachedToken(token string, refreshAt time.Time) *cachedToken {
	return &cachedToken{token: token, header: "Bearer " + token, refreshAt: refreshAt}
}

// secretRead is one call of the getter. Callers that need its outcome wait
// on done; completed and err are written before done is closed.
//
// This is a hand-written single flight: golang.org/x/sync is not a
// dependency of every upstream this package is copied into, and the few
// lines here also decide WHEN a caller may join a read, which
// singleflight.Group cannot express (a demand read reuses a result that
// completed under MinForcedRefreshInterval ago).
type secretRead struct {
	done      chan struct{}
	completed time.Time
	err       error // nil when the read yielded a usable token
	// rejected is the token whose 401 started this read, "" for a periodic
	// or first read. Only a read started by a 401 of the same token may
	// answer a 401: a read that completed before the rejection (a periodic
	// one a moment earlier) says nothing about what the Secret holds after
	// a rotation.
	rejected string
	// caRejected is the CA bundle whose verification failure started this
	// read, nil for any other cause; the same rule as for rejected.
	caRejected *caSnapshot
	// caGen is the source's caGen when the read started.
	caGen uint64
	// slowReported makes "did not finish in time" one log line per read,
	// however many requests gave up waiting for it.
	slowReported atomic.Bool
}

// alreadyDone stands for "no read needed": its channel is closed.
var alreadyDone = func() *secretRead {
	r := &secretRead{done: make(chan struct{})}
	close(r.done)
	return r
}()

// readCause says why a read is wanted; it decides whether an existing
// outcome is good enough.
type readCause int

const (
	readExpired readCause = iota // the cached token passed refreshAt
	readNoToken                  // nothing cached; the caller waits
	readChanged                  // a caller read another token from the Secret
)

// errNoVerdict is returned after a 401 when no read that started after the
// rejection could be had (other reads kept getting in the way); the caller
// returns its 401 and learns nothing about the Secret.
var errNoVerdict = errors.New("no Secret read started after the 401 completed")

var _ oauth2.TokenSource = (*SecretTokenSource)(nil)

// NewSecretTokenSource validates opts and returns a source. It does not read
// the Secret: with InitialToken it has a fresh token already, without it the
// first request reads.
func NewSecretTokenSource(opts SecretTokenSourceOptions) (*SecretTokenSource, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("membercred: invalid SecretTokenSourceOptions: %w", err)
	}
	opts = opts.withDefaults()
	s := &SecretTokenSource{
		cluster:   opts.Cluster,
		namespace: opts.Namespace,
		name:      opts.Name,
		secretRef: opts.Namespace + "/" + opts.Name,
		period:    opts.RefreshPeriod,
		metrics:   opts.Metrics,
		log:       opts.Logger.WithValues("cluster", opts.Cluster, "secret", opts.Namespace+"/"+opts.Name),
		clock:     opts.Clock,
		readWait:  MaxReadWait,
	}
	s.ca = newCATrust(s.caAfterFailure)
	s.getter.Store(&opts.Getter)
	if opts.InitialToken != "" {
		token, _ := normalizeToken([]byte(opts.InitialToken)) // Validate accepted it
		now := s.clock.Now()
		s.current.Store(newCachedToken(token, now.Add(s.period)))
		s.lastRefresh = now
		s.seen = append(s.seen, token)
		s.metrics.confirmed(s.cluster, now)
	}
	return s, nil
}

// Token implements oauth2.TokenSource. The returned token expires when the
// Secret is next due to be read (the token itself may well stay valid
// longer; this is when this source wants to be asked again), so a wrapping
// cache such as oauth2's ReuseTokenSource or client-go's
// NewCachedTokenSource asks again by then and picks up a rotation: with a
// zero Expiry oauth2 would keep the first token forever. Both caches treat a
// token as expired 10s early (oauth2's expiryDelta, client-go's leeway), so
// in the last 10s of a period they ask on every call; that costs an atomic
// load, never a read, until the period is up. Past it the token still
// served while the background read runs carries an Expiry in the past, so
// the cache keeps asking until the read lands. oauth2 gives Token no
// context: with no token cached it waits for a read at most MaxReadWait.
func (s *SecretTokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.token(context.Background())
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: tok.token, TokenType: "Bearer", Expiry: tok.refreshAt}, nil
}

// token returns the token to send. It blocks only when none is cached.
func (s *SecretTokenSource) token(ctx context.Context) (*cachedToken, error) {
	tok := s.current.Load()
	if tok == nil {
		return s.awaitFirstToken(ctx)
	}
	if !s.clock.Now().Before(tok.refreshAt) && !s.reading.Load() {
		s.startRead(readExpired) // stale-while-revalidate: do not wait
	}
	return tok, nil
}

func (s *SecretTokenSource) awaitFirstToken(ctx context.Context) (*cachedToken, error) {
	read := s.startRead(readNoToken)
	var dl readDeadline
	defer dl.stop()
	if err := s.wait(ctx, read, &dl); err != nil {
		return nil, fmt.Errorf("member cluster %q: waiting for the token from Secret %s: %w", s.cluster, s.secretRef, err)
	}
	if tok := s.current.Load(); tok != nil {
		return tok, nil
	}
	if read.err != nil {
		return nil, read.err
	}
	return nil, s.noTokenError("was not read")
}

// readDeadline is the one bound on how long a request waits for Secret
// reads, however many it waits for: its timer starts with the first wait
// that blocks and is shared by every later one. The zero value is ready to
// use; stop releases the timer.
type readDeadline struct {
	expired <-chan time.Time
	release func() bool
}

func (d *readDeadline) stop() {
	if d.release != nil {
		d.release()
	}
}

// wait waits for read to complete, never past the request's deadline d
// (s.readWait from its first blocking wait) and never past ctx. The timer
// is only made when a read is still under way: this runs after a 401 or
// before the first token, never on the common path.
func (s *SecretTokenSource) wait(ctx context.Context, read *secretRead, d *readDeadline) error {
	select {
	case <-read.done:
		return nil
	default:
	}
	select {
	case <-read.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.expiry(s.clock, s.readWait):
		if read.slowReported.CompareAndSwap(false, true) {
			s.log.Error(nil, "Reading the member cluster Secret did not finish in time; requests waiting for it go on without it", "wait", s.readWait)
		}
		return fmt.Errorf("no read of Secret %s completed within %s", s.secretRef, s.readWait)
	}
}

// expiry returns the deadline's channel, starting its timer of wait on
// the first call. The timer runs on clk when clk makes timers (the real
// clock does; so does a fake clock.Clock in tests), else on the real time.
func (d *readDeadline) expiry(clk clock.PassiveClock, wait time.Duration) <-chan time.Time {
	if d.expired != nil {
		return d.expired
	}
	if c, ok := clk.(clock.Clock); ok {
		t := c.NewTimer(wait)
		d.expired, d.release = t.C(), t.Stop
	} else {
		t := time.NewTimer(wait)
		d.expired, d.release = t.C, t.Stop
	}
	return d.expired
}

// tokenAfterUnauthorized returns the token to replay a request with after
// it got 401 with sent: a token another goroutine already read, or the
// outcome of a read of the Secret that started after sent was rejected
// (coalesced with every other request rejected with sent). It returns sent
// itself when the Secret still holds it, and an error when no such read
// completed: the read failed (its error), the caller gave up, or
// s.readWait passed. That bound covers every read the request waits for,
// together: MaxReadWait is the most a 401 is held up. An error says
// nothing about the token.
func (s *SecretTokenSource) tokenAfterUnauthorized(ctx context.Context, sent *cachedToken) (*cachedToken, error) {
	var dl readDeadline
	defer dl.stop()
	// A read under way that a 401 did not start (a periodic one) is waited
	// out and then followed by a read of our own; twice is enough for any
	// interleaving but a pathological one, which gets errNoVerdict.
	for range 3 {
		read, answers := s.startUnauthorizedRead(sent)
		if err := s.wait(ctx, read, &dl); err != nil {
			return nil, err
		}
		if !answers {
			continue
		}
		cur := s.current.Load() // non-nil: sent came from it
		if read.err != nil && cur.token == sent.token {
			return nil, read.err
		}
		return cur, nil
	}
	return nil, errNoVerdict
}

// startUnauthorizedRead returns the read that answers a 401 of sent, and
// whether it does: alreadyDone when a new token is cached, the read a 401 of
// the same token started (under way, or completed under
// MinForcedRefreshInterval ago, which is what coalesces a storm and spaces
// reads of a Secret whose token stays rejected), or a new read. It returns
// answers=false with a read under way for another reason, which the caller
// waits out before asking again.
func (s *SecretTokenSource) startUnauthorizedRead(sent *cachedToken) (read *secretRead, answers bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.current.Load(); cur != nil && cur.token != sent.token {
		return alreadyDone, true // another request already picked up a new token
	}
	if s.inFlight != nil {
		return s.inFlight, s.inFlight.rejected == sent.token
	}
	if lr := s.lastRead; lr != nil && lr.rejected == sent.token && s.clock.Now().Sub(lr.completed) < MinForcedRefreshInterval {
		return lr, true
	}
	return s.launchRead(sent.token, nil), true
}

// startRead joins the read under way or starts one, unless the cause is
// already satisfied; it never blocks on the getter. It returns nil only for
// readExpired when another read has refreshed the token meanwhile.
func (s *SecretTokenSource) startRead(cause readCause) *secretRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight != nil {
		return s.inFlight
	}
	now := s.clock.Now()
	cur := s.current.Load()
	switch cause {
	case readExpired:
		if cur != nil && now.Before(cur.refreshAt) {
			return nil
		}
	case readNoToken:
		if cur != nil {
			return alreadyDone
		}
		if s.recentRead(now) {
			return s.lastRead // its error is still news; do not hammer the getter
		}
	}
	return s.launchRead("", nil)
}

// launchRead starts a read on its own goroutine. Callers hold s.mu and have
// checked that no read is under way.
func (s *SecretTokenSource) launchRead(rejected string, caRejected *caSnapshot) *secretRead {
	read := &secretRead{done: make(chan struct{}), rejected: rejected, caRejected: caRejected, caGen: s.caGen.Load()}
	s.inFlight = read
	s.reading.Store(true)
	go s.read(read)
	return read
}

// recentRead reports whether a read completed under MinForcedRefreshInterval
// ago. Callers hold s.mu.
func (s *SecretTokenSource) recentRead(now time.Time) bool {
	return s.lastRead != nil && now.Sub(s.lastRead.completed) < MinForcedRefreshInterval
}

// read calls the getter once and publishes the outcome.
func (s *SecretTokenSource) read(r *secretRead) {
	secret, getErr := s.callGetter()
	token, reason, detail := tokenFromSecret(secret, getErr)
	now := s.clock.Now()

	s.mu.Lock()
	prev := s.current.Load()
	prevReason := s.lastReason
	// A getter may return the Secret beside its error; its token is a value
	// seen in the Secret even though the read failed.
	if held := rawToken(secret); held != "" {
		s.remember(held)
	}
	if reason == "" {
		s.current.Store(newCachedToken(token, now.Add(s.period)))
		s.lastRefresh = now
		s.lastError, s.lastReason, s.failures = "", "", 0
		s.remember(token)
	} else {
		detail = redact(detail, s.seen)
		if prev != nil {
			// Keep the last good token, and do not read again before the next
			// period: a broken Secret costs no more reads than a good one.
			// A revoked token still forces a read through the 401 path.
			s.current.Store(&cachedToken{token: prev.token, header: prev.header, refreshAt: now.Add(s.period)})
		}
		s.lastError, s.lastReason = detail, reason
		s.failures++
		r.err = s.noTokenError(detail)
	}
	r.completed = now
	ca, tracked := s.caFromSecret(secret, getErr)
	s.mu.Unlock()

	if tracked {
		s.applyCA(ca, r.caGen)
	}

	// Log and count outside the lock but before the read is marked done, so
	// that whoever sees it done (a waiter, the next read, a test) also sees
	// its log line and metrics. Requests are not held up: the new token is
	// already published and stale-token requests never wait for a read.
	s.recordRead(prev, token, prevReason, reason, detail, now)

	s.mu.Lock()
	s.lastRead = r
	s.inFlight = nil
	s.reading.Store(false)
	if r.caGen != s.caGen.Load() {
		// A config brought another bundle while this read was under way:
		// read what the Secret holds now (see adoptCA).
		s.launchRead("", nil)
	}
	s.mu.Unlock()
	close(r.done)
}

// maxSeenTokens bounds the tokens remembered for redaction: a Secret is
// rotated every few hours at most, and a getter's error quotes what the
// Secret holds now or held a moment ago.
const maxSeenTokens = 8

// remember adds token to s.seen. Callers hold s.mu.
func (s *SecretTokenSource) remember(token string) {
	for _, t := range s.seen {
		if t == token {
			return
		}
	}
	if len(s.seen) == maxSeenTokens {
		s.seen = append(s.seen[:0], s.seen[1:]...)
	}
	s.seen = append(s.seen, token)
}

// callGetter shields the process from a panicking getter: the read runs on
// its own goroutine, where a panic would take down the whole controller
// manager for the sake of one member cluster.
func (s *SecretTokenSource) callGetter() (secret *corev1.Secret, err error) {
	defer func() {
		if p := recover(); p != nil {
			secret, err = nil, fmt.Errorf("getter panicked: %v", p)
		}
	}()
	return (*s.getter.Load())(s.namespace, s.name)
}

// adopt takes a later caller's getter and what it read from the Secret (see
// Registry.Source). A token other than the cached one starts a read; the
// cached token keeps being served meanwhile.
func (s *SecretTokenSource) adopt(getter SecretGetter, initial string) {
	s.getter.Store(&getter)
	token, reason := normalizeToken([]byte(initial))
	if reason != "" { // "" or validated away by the caller
		return
	}
	s.mu.Lock()
	s.remember(token)
	s.mu.Unlock()
	if cur := s.current.Load(); cur == nil || cur.token != token {
		s.startRead(readChanged)
	}
}

// recordRead logs changes of state (never every read) and counts the read.
func (s *SecretTokenSource) recordRead(prev *cachedToken, token, prevReason, reason, detail string, at time.Time) {
	if reason != "" {
		s.metrics.refreshFailed(s.cluster, reason)
		if reason != prevReason {
			msg := "Cannot read the member cluster token from its Secret; keeping the last good token"
			if prev == nil {
				msg = "Cannot read the member cluster token from its Secret; requests to the member fail until it is fixed"
			}
			s.log.Error(errors.New(detail), msg, "reason", reason)
		}
		return
	}
	s.metrics.refreshed(s.cluster, at)
	if prevReason != "" {
		s.log.Info("Member cluster token is readable from its Secret again", "previousReason", prevReason)
	}
	if prev != nil && prev.token != token {
		// One line per rotation at default verbosity: the source is shared
		// by every client of the cluster (see Registry), and this is how an
		// operator sees which path recovered after a rotation.
		s.log.Info("Picked up a rotated member cluster token from its Secret")
	}
}

func (s *SecretTokenSource) noTokenError(detail string) error {
	return fmt.Errorf("member cluster %q: %w: Secret %s %s", s.cluster, ErrNoToken, s.secretRef, detail)
}

// notePersisted401 records a 401 that persisted after a fresh read, logging
// once when such a run starts.
func (s *SecretTokenSource) notePersisted401() {
	s.metrics.memberPersisted(s.cluster)
	if s.persisted401.Add(1) == 1 {
		s.log.Error(nil, "Member cluster rejects its credential (401 Unauthorized) and re-reading the Secret gave no other token; update the Secret with a valid token")
	}
}

// noteAccepted ends a run of persisted 401s, logging once if there was one.
// It costs one atomic load in the common case.
// noteRecovered records a request replayed after a 401 and accepted.
func (s *SecretTokenSource) noteRecovered() {
	s.metrics.memberRecovered(s.cluster)
	s.noteAccepted()
}

func (s *SecretTokenSource) noteAccepted() {
	if s.persisted401.Load() == 0 {
		return
	}
	if n := s.persisted401.Swap(0); n != 0 {
		s.log.Info("Member cluster accepts its credential again", "persisted401s", n)
	}
}

// Health returns a snapshot of this credential's state.
func (s *SecretTokenSource) Health() Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Health{
		Cluster:                     s.cluster,
		Secret:                      s.secretRef,
		HasToken:                    s.current.Load() != nil,
		LastRefresh:                 s.lastRefresh,
		LastError:                   s.lastError,
		LastErrorReason:             s.lastReason,
		ConsecutiveRefreshFailures:  s.failures,
		ConsecutivePersisted401s:    int(s.persisted401.Load()),
		TracksCABundle:              s.ca.current.Load() != nil,
		CABundleError:               s.caError,
		CABundleErrorReason:         s.caReason,
		ConsecutiveCABundleFailures: s.caFailures,
	}
}
