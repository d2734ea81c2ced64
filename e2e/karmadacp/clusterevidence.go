package karmadacp

import (
	"regexp"
)

// UpdateConflictIn is UpdateConflict for one member cluster: with two
// members, the evidence must name the one it is about.
func UpdateConflictIn(cluster string) *regexp.Regexp {
	return regexp.MustCompile(`Failed to update resource\(kind=Deployment, [^)]*\) in cluster ` + regexp.QuoteMeta(cluster) + `, .*the object has been modified`)
}

// WorkSyncFailedIn is WorkSyncFailed for the Works of one member cluster
// (namespace karmada-es-<cluster>).
func WorkSyncFailedIn(cluster string) *regexp.Regexp {
	return regexp.MustCompile(`Failed to sync work\(karmada-es-` + regexp.QuoteMeta(cluster) + `/[^)]*\) to cluster\(` + regexp.QuoteMeta(cluster) + `\)`)
}
