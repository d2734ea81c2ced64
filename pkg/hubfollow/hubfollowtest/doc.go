// Package hubfollowtest renders what the hub controllers publish, for tests
// of a worker that follows hub failover: the claim in
// status.activeController of the worker's controller.kubeslice.io Cluster,
// and the Cluster object a hub serves.
//
// One copy serves holdfast's e2e suite (e2e/worker, which publishes claims
// on real kube-apiservers) and the glue tests of the patched worker-operator
// tree (overlay/workeroperator, which serve them from fake hubs): it is
// carried with hubfollow into third_party/holdfast/hubfollow/hubfollowtest.
// hubfollow's own test checks that what it renders is what the follower
// reads, so a suite cannot drift into publishing a claim no worker decodes.
//
// The regression tests in tests/workeroperator keep their own fake API
// server and claim rendering: they are laid into the pristine twin too,
// which is upstream as released and carries no holdfast library, so they
// cannot import this package (docs/pipeline.md, "Carried libraries,
// overlay, tests").
//
// It uses only the standard library, as every carried package must build
// with each pinned upstream's dependencies.
package hubfollowtest
