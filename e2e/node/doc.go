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
//     (issue 27: the chart's RBAC). The drop-in: installed with the
//     pristine v1.6.4 stand-in image (internal/standin), `helm upgrade` to
//     holdfast's image with the same values, `helm rollback`; each step
//     Ready with restartCount 0 over 60 s, the container spec unchanged but
//     for its image, and the container's main process (found by its
//     cgroup) running with the uid, CapEff and NoNewPrivs the rendered
//     securityContext and the image's user imply, read from
//     /proc/<pid>/status.
//   - suite "karmada-node": holdfast's Karmada chart (host install mode,
//     default values) with holdfast's karmada-controller-manager and the
//     stand-ins of internal/standin for the rest, on cluster DNS
//     (node.StartDNS): every pod Running and Ready, and etcd's hostPath
//     kept inside the node's mount namespace.
//
// One node serves every scenario (TestNode); scenarios that do not
// interfere run in parallel on it. The suite needs root and the runtime of
// hack/node-deps.sh; without them it skips, which `make test`'s strict
// report counts as a failure.
package node
