// Package standin builds local OCI image layouts for every image the node
// suite needs that holdfast does not ship, under the names the charts
// render, so that a test node (containerd importing the layouts, charts
// with imagePullPolicy IfNotPresent) runs the charts with nothing pulled:
//
//   - Unshipped: what the Karmada chart deploys besides holdfast's images
//     in host install mode with default values (etcd, kube-apiserver as
//     karmada-apiserver, kube-controller-manager,
//     karmada-aggregated-apiserver, karmada-scheduler, karmada-webhook,
//     and the hook jobs' and init containers' cfssl and kubectl images),
//     plus CoreDNS for the node's cluster DNS;
//   - Pristine: upstream's images of the binaries holdfast ships
//     (karmada-controller-manager, karmada-search, karmada-metrics-adapter
//     v1.18.2, worker-operator v1.6.4), for the drop-in upgrade and
//     rollback.
//
// Catalogue lists each with what it is made of and how it differs from
// the image it replaces (docs/node-images.md has the same table).
//
// What they are made of: the tool cache's programs (internal/toolcache:
// etcd, kube-apiserver, kube-controller-manager and kubectl from the same
// k8s.io/kubernetes wrapper, cfssl, coredns), the pristine trees' binaries
// (internal/pipeline/treebin, from the trees internal/pipeline makes), Debian's
// busybox-static and bash-static for the hook scripts' shells and
// utilities, and
// hooktools, holdfast's stand-in for the two commands of the cfssl image
// busybox lacks (openssl req, curl). Each image follows its upstream's
// layout: binary path, entrypoint, user and working directory, read from
// the upstream Dockerfiles and the charts' command lines (defs.go says
// which). They are assembled by internal/pipeline/image (BuildPlain: the same
// root filesystem and layer writer as holdfast's images, no SBOM) for
// linux/amd64 only, the node's platform.
//
// Build is idempotent: each layout has a stamp beside it holding a hash of
// its definition and of the content of every file it copies; a layout
// whose stamp matches is kept, so a warm run hashes its inputs and writes
// nothing. Nothing here imports e2e/.
package standin
