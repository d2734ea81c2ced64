// Package estimator runs holdfast's karmada-scheduler-estimator, the real
// binary `holdfast build --upstream karmada` ships (patched, and upstream's
// code on the same dependency versions for the pristine rows), against a real member kube-apiserver
// on loopback, and checks what patch 0005 (the estimator follows its member
// kubeconfig) claims, from the outside: report suite
// "karmada-scheduler-estimator".
//
// The estimator's member kubeconfig is laid out as a kubelet Secret volume
// (the file a symlink through ..data, a change an atomic swap of ..data), as
// holdfast's chart mounts it. After the member's token, client certificate
// or serving CA is rotated, what the estimator answers Karmada's scheduler
// (MaxAvailableReplicas, asked over gRPC every 100 ms) must count a Node
// created afterwards. What is observed is what an operator could observe:
// the answer, the estimator's log, its /metrics, and the member API
// server's audit log (which ServiceAccount the estimator's requests
// authenticate as, and which were refused).
//
// The gRPC call is made without Karmada's generated client (holdfast's
// module does not depend on Karmada): grpc.go encodes the two messages with
// google.golang.org/protobuf's protowire and sends them over HTTP/2 without
// TLS (the estimator serves plain gRPC when no certificate flag is set).
//
// It draws on internal/harness/controlplane (etcd + kube-apiserver as
// processes, the audit log, ServiceAccount tokens, a restart on a new CA),
// internal/pipeline/build (where the shipped binaries are),
// internal/e2ereport (the rows, their timings and timeline events) and
// e2e/karmada (a Karmada binary's version, redacted log lines). Files that
// start processes carry the e2e build tag; the rest are pure helpers with
// quick unit tests.
package estimator
