package membercred

import (
	"fmt"
	"sync"
)

// Registry keeps one SecretTokenSource per member cluster for a process.
//
// Karmada builds member clients per call in several places (the object
// watcher and the cluster status controller build a rest.Config for almost
// every reconcile), so a source per rest.Config would mean as many caches,
// single flights and forced-read rate limits per cluster as configs alive:
// a rotation would be discovered, read and logged once per informer instead
// of once. Sharing one source per cluster makes a 401 on any client fix
// every client of that cluster, and makes "picked up a rotated token" one
// line per rotation.
//
// Lifetime: a source lives until Forget is called for its cluster (the glue
// does that where Karmada handles a deleted cluster), or until the cluster's
// Secret reference changes, which replaces it. Clients built from a replaced
// or forgotten source keep it and keep working; only new clients get the new
// one. A forgotten source records no metrics any more: its clients and reads
// outlive Forget (informers stop after it, reads finish), and a record would
// bring back a deleted cluster's series for good. A cluster that joins again
// under the same name gets a new source and new series.
type Registry struct {
	metrics *Metrics

	mu      sync.Mutex
	sources map[string]*SecretTokenSource
	// metricsOf holds the handle every source of a cluster records through,
	// replaced ones included, until Forget tombstones it.
	metricsOf map[string]*Metrics
}

// NewRegistry returns an empty registry whose sources record into metrics
// (nil records nothing).
func NewRegistry(metrics *Metrics) *Registry {
	return &Registry{
		metrics:   metrics,
		sources:   map[string]*SecretTokenSource{},
		metricsOf: map[string]*Metrics{},
	}
}

// Source returns the source of opts.Cluster, creating it from opts the first
// time (opts.Metrics is the registry's, through a handle Forget ends). For an
// existing source:
//   - opts.Getter replaces its getter, so the source reads through the
//     newest caller's getter rather than one whose informer may have been
//     stopped since;
//   - an opts.InitialToken other than the cached token means the caller just
//     read a Secret that changed: the source reads the Secret itself in the
//     background (stale-while-revalidate) rather than trusting either copy;
//   - a different Secret (namespace/name) replaces the source.
func (r *Registry) Source(opts SecretTokenSourceOptions) (*SecretTokenSource, error) {
	opts.Metrics = r.metrics
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("membercred: invalid SecretTokenSourceOptions: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sources[opts.Cluster]; ok && s.namespace == opts.Namespace && s.name == opts.Name {
		s.adopt(opts.Getter, opts.InitialToken)
		return s, nil
	}
	handle, ok := r.metricsOf[opts.Cluster]
	if !ok {
		handle = r.metrics.forCluster()
	}
	opts.Metrics = handle
	s, err := NewSecretTokenSource(opts)
	if err != nil {
		return nil, err
	}
	r.sources[opts.Cluster] = s
	r.metricsOf[opts.Cluster] = handle
	return s, nil
}

// Lookup returns the cluster's current source, nil if it has none. Glue
// that only adds to a client built by Source (TrustSecretCABundle) uses it
// to reach the same source without a getter of its own.
func (r *Registry) Lookup(cluster string) *SecretTokenSource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sources[cluster]
}

// Forget drops the cluster's source, stops every source the registry built
// for it from recording, and deletes its metric series, so a deleted cluster
// neither lingers in dashboards nor keeps a staleness alert firing. It holds
// the registry's lock throughout so that a re-join's first series cannot be
// deleted by a Forget that began before it. Forgetting an unknown cluster
// deletes whatever series it has.
func (r *Registry) Forget(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sources, cluster)
	if handle, ok := r.metricsOf[cluster]; ok {
		delete(r.metricsOf, cluster)
		handle.forget(cluster)
		return
	}
	r.metrics.Forget(cluster)
}

// Len returns how many clusters have a source.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sources)
}
