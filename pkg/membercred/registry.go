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
// does that where Karmada tears down a deleted cluster's informers), or
// until the cluster's Secret reference changes, which replaces it. Clients
// built from a replaced or forgotten source keep it and keep working; only
// new clients get the new one.
type Registry struct {
	metrics *Metrics

	mu      sync.Mutex
	sources map[string]*SecretTokenSource
}

// NewRegistry returns an empty registry whose sources record into metrics
// (nil records nothing).
func NewRegistry(metrics *Metrics) *Registry {
	return &Registry{metrics: metrics, sources: map[string]*SecretTokenSource{}}
}

// Source returns the source of opts.Cluster, creating it from opts the first
// time (opts.Metrics is the registry's). For an existing source:
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
	s, err := NewSecretTokenSource(opts)
	if err != nil {
		return nil, err
	}
	r.sources[opts.Cluster] = s
	return s, nil
}

// Forget drops the cluster's source and deletes its metric series, so a
// deleted cluster neither lingers in dashboards nor keeps a staleness alert
// firing. Forgetting an unknown cluster does nothing.
func (r *Registry) Forget(cluster string) {
	r.mu.Lock()
	delete(r.sources, cluster)
	r.mu.Unlock()
	r.metrics.Forget(cluster)
}

// Len returns how many clusters have a source.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sources)
}
