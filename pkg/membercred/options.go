package membercred

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// DefaultRefreshPeriod is how long a token read from the Secret is used
	// before the Secret is read again. It matches upstream Karmada's fix
	// (karmada PR #7663) so Secret reads are no chattier than upstream. It
	// does not bound how long a REVOKED token is used: a revoked token gets a
	// 401, which forces a re-read at once. It only bounds how long a
	// rotated-but-still-valid token keeps being sent.
	DefaultRefreshPeriod = 5 * time.Minute

	// MinForcedRefreshInterval is how close together two on-demand reads of
	// the Secret (after a 401, or with no token cached) may complete; a
	// demand arriving sooner reuses the previous read's result. It protects
	// the getter from a 401 storm: every informer of a revoked member 401s at
	// once, and a reflector's first retry comes after ~0.8s
	// (wait.Backoff{Duration: 800ms} in client-go's reflector), so 1s
	// coalesces a storm without delaying the retry that follows it.
	MinForcedRefreshInterval = time.Second

	// MaxReadWait bounds how long a request waits for reads of the Secret,
	// all of them together: a request that got 401 and waits for the forced
	// read (and first for a periodic read under way), or one sent before
	// any token is known. When it passes the request goes on without
	// the read (a 401 is returned as it came; with no token, an error), and
	// the read, still under way, serves later requests when it completes.
	// Healthy getters answer from an informer cache in microseconds, or with
	// one GET to the local karmada-apiserver in milliseconds; a getter stuck
	// for 5s is stuck (a cache that never syncs, a hung connection), and
	// without a bound every later 401 would queue behind it, or forever for
	// a caller without a deadline (oauth2's Token() has no context). 5s stays
	// well under client-go's watch and request timeouts, so a waiting
	// reflector sees its 401 and backs off as it would without holdfast.
	MaxReadWait = 5 * time.Second

	// SecretTokenKey is the key holding the bearer token in a Karmada cluster
	// Secret (clusterv1alpha1.SecretTokenKey upstream; not imported so that
	// this package stays free of Karmada's API module).
	SecretTokenKey = "token"
)

// SecretGetter returns the Secret namespace/name. It has the shape of
// BuildClusterConfig's getter. A getter may return a non-nil empty Secret
// together with an error (controller-runtime's client.Get does, with
// NotFound); the error wins.
type SecretGetter func(namespace, name string) (*corev1.Secret, error)

// SecretTokenSourceOptions configure a SecretTokenSource. Zero values take the
// documented defaults.
type SecretTokenSourceOptions struct {
	// Cluster is the member cluster's name; it labels errors, logs and
	// metrics. Required.
	Cluster string
	// Namespace and Name locate the cluster Secret holding the token under
	// SecretTokenKey. Required.
	Namespace, Name string
	// Getter reads the Secret. Required. It is called from a short-lived
	// goroutine, never concurrently with itself for one source; a getter that
	// never returns stalls refreshes of this source (the last good token keeps
	// being used).
	Getter SecretGetter
	// InitialToken is the token the caller already read from the Secret
	// (BuildClusterConfig reads it to build the config). It counts as fresh
	// at creation, so building a client costs no extra read. Optional; empty
	// means the first request reads the Secret.
	InitialToken string
	// RefreshPeriod is how long a read token is used before the Secret is
	// read again. 0 means DefaultRefreshPeriod; negative is invalid.
	RefreshPeriod time.Duration
	// Metrics records refreshes and 401 handling. nil records nothing.
	Metrics *Metrics
	// Logger receives state changes (never per request). The zero value means
	// klog.Background(), which is what Karmada logs through. logr.Discard()
	// is that same zero value; to silence, pass a logger with a no-op sink.
	Logger logr.Logger
	// Clock tells the time. nil means the real clock; tests pass a fake one.
	// Now dates reads; a clock that also makes timers (clock.Clock) times a
	// request's wait for a read, else real timers do. The source owns no
	// timers or goroutines between requests.
	Clock clock.PassiveClock
}

// Validate reports every missing or bad field by name, so a flag or
// environment parser can reject bad values before anything is built.
func (o SecretTokenSourceOptions) Validate() error {
	var errs []error
	if o.Cluster == "" {
		errs = append(errs, errors.New("Cluster must be set"))
	}
	if o.Namespace == "" {
		errs = append(errs, fmt.Errorf("Namespace of the Secret for cluster %q must be set", o.Cluster))
	}
	if o.Name == "" {
		errs = append(errs, fmt.Errorf("Name of the Secret for cluster %q must be set", o.Cluster))
	}
	if o.Getter == nil {
		errs = append(errs, fmt.Errorf("Getter for cluster %q must be set", o.Cluster))
	}
	if o.RefreshPeriod < 0 {
		errs = append(errs, fmt.Errorf("RefreshPeriod for cluster %q must not be negative, got %s", o.Cluster, o.RefreshPeriod))
	}
	if o.InitialToken != "" {
		if _, reason := normalizeToken([]byte(o.InitialToken)); reason != "" {
			errs = append(errs, fmt.Errorf("InitialToken for cluster %q is not a usable bearer token (%s)", o.Cluster, reason))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns o with zero values replaced by defaults.
func (o SecretTokenSourceOptions) withDefaults() SecretTokenSourceOptions {
	if o.RefreshPeriod == 0 {
		o.RefreshPeriod = DefaultRefreshPeriod
	}
	if o.Logger.GetSink() == nil {
		o.Logger = klog.Background()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}
