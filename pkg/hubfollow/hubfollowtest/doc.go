// Package hubfollowtest is the test side of hub failover following: it
// renders what the hub controllers publish (the claim in
// status.activeController of the worker's controller.kubeslice.io Cluster,
// and the Cluster object a hub serves) and runs a stand-in hub (Hub) that
// serves them.
//
// One copy serves hubfollow's own tests, holdfast's e2e suite (e2e/worker,
// which publishes claims on real kube-apiservers and uses only Claim) and
// the glue tests of the patched worker-operator tree (overlay/workeroperator,
// which run against Hub): it is carried with hubfollow into
// third_party/holdfast/hubfollow/hubfollowtest.
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
