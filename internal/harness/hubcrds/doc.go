// Package hubcrds gives the worker suites (e2e/worker on processes, e2e/node
// on a real node) the CRDs a KubeSlice hub and a worker cluster serve: read
// from the pinned modules through the Go module proxy, with the hub's
// Cluster CRD extended by status.activeController, which the pinned API
// module lacks. One copy, so both suites' hubs serve the same schema.
package hubcrds
