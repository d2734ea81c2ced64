// Package node installs holdfast's charts on a real node (internal/node:
// containerd, runc, kubelet, kube-proxy in namespaces of their own) and
// checks what only a node shows:
//
//   - suite "node": the harness itself: a pod runs and is Ready, the
//     kubelet restarts a container that exits, a pod cannot reach anything
//     outside the node's network namespace (the network rule), and the host
//     is left as it was (iptables, netns, links, cgroups, the sysctls kubelet
//     writes), compared before and after the node's life.
//   - suite "worker-node": worker-operator's chart from _output/charts with
//     its image imported from _output/images, as users install them: with
//     two hubs, the worker exits on a confirmed switch to hub-b and the
//     kubelet restarts it (restartCount read from the pod status), after
//     which hub-b's audit log shows its requests; without a secondary, it
//     runs five minutes with no restart and no "forbidden" in its log
//     (issue 27: the chart's RBAC).
//
// One node serves every scenario (TestNode); scenarios that do not
// interfere run in parallel on it. The suite needs root and the runtime of
// hack/node-deps.sh; without them it skips, which `make test`'s strict
// report counts as a failure.
package node
