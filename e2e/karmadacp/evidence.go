package karmadacp

import "regexp"

// Log patterns the report quotes as evidence.
var (
	// MemberWatchUnauthorized is the member Deployment informer of
	// Karmada's generic (dynamic) informer manager refused with 401: the
	// informer the execution and work-status controllers read member
	// Deployments through. client-go names a dynamic informer's type by
	// its resource: type="apps/v1, Resource=deployments".
	MemberWatchUnauthorized = regexp.MustCompile(`"Failed to watch" err="[^"]*Unauthorized[^"]*".*type="apps/v1, Resource=deployments"`)
	// UpdateConflict is the execution controller's update of a member
	// Deployment refused because the copy it started from (its member
	// informer's) is older than the member's.
	UpdateConflict = regexp.MustCompile(`Failed to update resource\(kind=Deployment, [^)]*\) in cluster .*the object has been modified`)
	// WorkSyncFailed is the execution controller failing to apply a Work.
	WorkSyncFailed = regexp.MustCompile(`Failed to sync work\(`)
	// Unauthorized is any 401 a component logs.
	Unauthorized = regexp.MustCompile(`Unauthorized`)
	// PodInformerUnauthorized is a member Pod informer refused with 401:
	// karmada-metrics-adapter's typed informer (type="*v1.Pod"), through
	// which it learns which Pods a member has. It logs JSON, where the
	// keys may come in either order.
	PodInformerUnauthorized = regexp.MustCompile(`Failed to watch.*(Unauthorized.*"\*v1\.Pod"|"\*v1\.Pod".*Unauthorized)`)
	// MetricsQueryUnauthorized is karmada-metrics-adapter's member dynamic
	// client refused a PodMetrics GET or LIST with 401.
	MetricsQueryUnauthorized = regexp.MustCompile(`Failed to query metrics in cluster\([^)]*\): Unauthorized`)
	// MemberTokenPickedUp is the patched binary picking up a rotated token
	// from the Secret (pkg/membercred).
	MemberTokenPickedUp = regexp.MustCompile(`Picked up a rotated member cluster token`)
	// MemberCABundlePickedUp is the patched binary taking a changed
	// caBundle from the Secret (pkg/membercred).
	MemberCABundlePickedUp = regexp.MustCompile(`Picked up a changed member cluster CA bundle`)
	// NodeInformerUnknownAuthority is the member node reflector failing to
	// verify the member's serving certificate.
	NodeInformerUnknownAuthority = regexp.MustCompile(`\*v1\.Node.*x509: certificate signed by unknown authority`)
	// MemberWatchUnknownAuthority is a member Deployment informer failing
	// to verify the member's serving certificate (the error quotes the URL,
	// so unlike MemberWatchUnauthorized it cannot stop at a quote).
	// PodInformerUnknownAuthority is karmada-metrics-adapter's member Pod
	// informer failing to verify the member's serving certificate (JSON
	// logs: the keys may come in either order).
	PodInformerUnknownAuthority = regexp.MustCompile(`Failed to watch.*(x509: certificate signed by unknown authority.*"\*v1\.Pod"|"\*v1\.Pod".*x509: certificate signed by unknown authority)`)
	MemberWatchUnknownAuthority = regexp.MustCompile(`"Failed to watch".*x509: certificate signed by unknown authority.*type="apps/v1, Resource=deployments"`)
	// UnknownAuthority is any failure to verify the member's serving
	// certificate a component logs, whichever client or informer it was.
	UnknownAuthority = regexp.MustCompile(`x509: certificate signed by unknown authority`)
	// WatchTooOld is a reflector's watch closed because its
	// resourceVersion is older than the server's watch cache reaches back
	// (klog -v=4): after a kube-apiserver restart the cache starts at the
	// current etcd revision, so the informer LISTs once.
	WatchTooOld = regexp.MustCompile(`"Watch closed".*too old resource version`)
)
