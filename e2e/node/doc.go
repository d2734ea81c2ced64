// Package node installs holdfast's charts on a real node
// (internal/harness/node: containerd, runc, kubelet, kube-proxy in namespaces
// of their own) and checks what only a node shows:
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
//     pristine v1.6.4 stand-in image (internal/harness/standin), `helm upgrade`
//     to holdfast's image with the same values, `helm rollback`; each step
//     Ready with restartCount 0 over 60 s, the container spec unchanged but
//     for its image, and the container's main process (found by its
//     cgroup) running with the uid, CapEff and NoNewPrivs the rendered
//     securityContext and the image's user imply, read from
//     /proc/<pid>/status.
//   - suite "karmada-node": holdfast's Karmada chart (host install mode)
//     installed with upstream's karmada-controller-manager image (the
//     pristine stand-in) and the stand-ins of internal/harness/standin for the
//     rest, on cluster DNS (node.StartDNS), karmada-apiserver given an
//     audit log by the post-renderer ./auditrender: every pod Running and
//     Ready, etcd's hostPath kept inside the node's mount namespace, and
//     member1 joined in Push mode. Then one flow on that install: member1's
//     token rotated, revoked and the member restarted (pristine: an update
//     does not land, RED); `helm upgrade --reset-values` to holdfast's
//     image; the same rotation (an update lands, no restart, GREEN); a CA
//     rotation with old and new CA published first; `helm rollback`; each
//     helm step with every pod Ready and no restart and the
//     controller-manager's /proc/<pid>/status against the chart's
//     securityContext; no request answered 403 in karmada-apiserver's
//     audit log over the flow. Last, the own-credential guard through the
//     kubelet: the controller-manager given a ServiceAccount token
//     kubeconfig of its own, the token revoked and a new one written to
//     its Secret; the guard exits, the kubelet restarts the container and
//     it works again.
//
// One node serves every scenario (TestNode); scenarios that do not
// interfere run in parallel on it. The suite needs root and the runtime of
// hack/node-deps.sh; without them it skips, which `make test`'s strict
// report counts as a failure.
package node
