package toolcache

// etcdVersion is the etcd that kube-apiserver v1.35 is tested against
// upstream (cluster/images/etcd in k8s.io/kubernetes v1.35 ships 3.6.x).
const etcdVersion = "v3.6.6"

// Etcd is the etcd server, built from its server module: the module's root
// package is etcd's main.
var Etcd = Tool{
	Name:    "etcd",
	Version: etcdVersion,
	// go 1.24 is what `go get go.etcd.io/etcd/server/v3@v3.6.6` writes; kept
	// so that the build matches the one that warmed CI's Go cache.
	GoMod: `module holdfast.local/etcd-build

go 1.24

require go.etcd.io/etcd/server/v3 ` + etcdVersion + `
`,
	Package: "go.etcd.io/etcd/server/v3",
}
