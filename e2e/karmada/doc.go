// Package karmada holds the pure helpers the Karmada suite on a real
// control plane (e2e/karmadacp) reads its evidence with: log lines matched,
// redacted and shortened for a report (Lines and the evidence patterns,
// the node reflector's backoff waits), a Cluster's status (ClusterStatus:
// Ready and status.nodeSummary), the membercred and own-credential guard
// counters from a /metrics endpoint, and a Karmada binary's version.
//
// It was the Karmada rotation suite (report suite karmada-rotation), which
// ran one karmada-controller-manager against a Cluster CRD generated with
// controller-gen as a stand-in for karmada-aggregated-apiserver. Its
// scenarios (rotation, late-secret, repeated-rotation, repeated-restart,
// own-credential) now run in e2e/karmadacp against the real aggregated API
// server and the default controller set, and the stand-in is gone; the
// helpers stayed here so that the move touched no more than the scenarios.
//
// No file here is tagged: the unit tests run with `make unit`.
package karmada
