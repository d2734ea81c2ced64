package controlplane

import (
	"fmt"
	"net"
	"path/filepath"
)

// layout is where a cluster keeps its files under Options.Dir.
type layout string

func (l layout) etcdData() string        { return filepath.Join(string(l), "etcd") }
func (l layout) certs() string           { return filepath.Join(string(l), "certs") }
func (l layout) cert(name string) string { return filepath.Join(l.certs(), name) }
func (l layout) logs() string            { return filepath.Join(string(l), "logs") }
func (l layout) etcdLog() string         { return filepath.Join(l.logs(), "etcd.log") }
func (l layout) apiServerLog() string    { return filepath.Join(l.logs(), "kube-apiserver.log") }
func (l layout) tokenAuthFile() string   { return filepath.Join(string(l), "token-auth.csv") }
func (l layout) adminKubeconfig() string { return filepath.Join(string(l), "admin.kubeconfig") }

// ports are a cluster's listeners, all on 127.0.0.1 but kube-apiserver's
// when apiServerAddress is set (Options.Address).
type ports struct {
	etcdClient, etcdPeer, apiServer int
	apiServerAddress                net.IP
}

func (p ports) apiServerHost() string {
	if p.apiServerAddress == nil {
		return loopback
	}
	return p.apiServerAddress.String()
}

func (p ports) etcdURL() string { return fmt.Sprintf("http://%s:%d", loopback, p.etcdClient) }

// serviceAccountIssuer is the iss claim of minted tokens. kubeadm's default,
// so tokens look like those of a real cluster; nothing fetches it.
const serviceAccountIssuer = "https://kubernetes.default.svc"

// serviceClusterIPRange is the Service network; nothing routes it, but
// kube-apiserver allocates ClusterIPs from it and warns without it.
const serviceClusterIPRange = "10.96.0.0/16"

func etcdArgs(name string, l layout, p ports) []string {
	peer := fmt.Sprintf("http://%s:%d", loopback, p.etcdPeer)
	return []string{
		"--name=" + name,
		"--data-dir=" + l.etcdData(),
		"--listen-client-urls=" + p.etcdURL(),
		"--advertise-client-urls=" + p.etcdURL(),
		// A peer listener is mandatory even for one member; left at its
		// default (localhost:2380) two clusters would collide.
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + name + "=" + peer,
		// The data is thrown away with the run, and fsync on a disk shared
		// with parallel builds is what makes a test etcd, and every write
		// through kube-apiserver, slow.
		"--unsafe-no-fsync",
		// A lone member elects itself one election timeout after it starts.
		// The defaults (1 s, 100 ms heartbeats) are for real networks; with
		// no peers nothing can time out spuriously, and this saves about a
		// second of every cluster start.
		"--election-timeout=100",
		"--heartbeat-interval=10",
		// Startup and failures still show; per-request info lines do not
		// bury them.
		"--log-level=warn",
	}
}

// apiServerArgs are the flags of a cluster's kube-apiserver. Plain HTTP to
// etcd is deliberate: both ends are on loopback and the test owns the
// machine; TLS there would only slow every start.
const disableServiceAccountAdmission = "--disable-admission-plugins=ServiceAccount"

func apiServerArgs(l layout, p ports, extra []string) []string {
	args := []string{
		"--etcd-servers=" + p.etcdURL(),
		"--bind-address=" + p.apiServerHost(),
		"--advertise-address=" + p.apiServerHost(),
		fmt.Sprintf("--secure-port=%d", p.apiServer),
		"--tls-cert-file=" + l.cert(servingCertFile),
		"--tls-private-key-file=" + l.cert(servingKeyFile),
		// The admin credential: a static bearer token in group
		// system:masters, so the harness needs no client certificates.
		"--token-auth-file=" + l.tokenAuthFile(),
		// ServiceAccount tokens are minted with the TokenRequest API and
		// checked against the SA's current UID (lookup), which is what
		// makes "delete and recreate the ServiceAccount" a revocation.
		"--service-account-key-file=" + l.cert(saPubFile),
		"--service-account-signing-key-file=" + l.cert(saKeyFile),
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-lookup=true",
		"--api-audiences=" + serviceAccountIssuer,
		// RBAC, so a ServiceAccount can do only what a suite bound it to,
		// as in a real cluster. No Node authorizer: there are no kubelets.
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		// Without kube-controller-manager nothing creates the "default"
		// ServiceAccount of a namespace, and the ServiceAccount admission
		// plugin would reject every Pod that does not name one.
		disableServiceAccountAdmission,
		// One server on loopback: nothing finds it through the "kubernetes"
		// Service, so its endpoints need no reconciling (one etcd write
		// every ten seconds saved, and no lease to wait for at start).
		"--endpoint-reconciler-type=none",
	}
	return append(args, extra...)
}
