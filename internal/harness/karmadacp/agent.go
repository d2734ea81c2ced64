package karmadacp

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// AgentKubeconfigKey is the key of the agent's karmada-apiserver
// kubeconfig in its Secret volume: `karmadactl register` creates Secret
// karmada-kubeconfig with this key and mounts it at /etc/kubeconfig
// (pkg/karmadactl/register in the pinned tree).
const AgentKubeconfigKey = "karmada-kubeconfig"

// agentTokenTTL outlives any run: scenarios revoke the agent's tokens,
// they do not wait for them to expire.
const agentTokenTTL = time.Hour

// PullMember is a member cluster joined in Pull mode: a karmada-agent
// process beside it registered its Cluster and applies its Works. The
// agent's karmada-apiserver kubeconfig is in a Secret volume
// (KubeconfigVolume) and holds a token of its own ServiceAccount on
// karmada-apiserver.
type PullMember struct {
	// Name is the Cluster's name (--cluster-name).
	Name string
	// API is the member's kube-apiserver.
	API *controlplane.Cluster
	// KubeconfigVolume holds AgentKubeconfigKey, the file
	// --karmada-kubeconfig names.
	KubeconfigVolume *SecretVolume
	cp               *ControlPlane
	// account is the ServiceAccount (in SystemNamespace) whose token the
	// kubeconfig holds, token that token.
	account, token string
	rotations      int
	// firstCert and firstKey are JoinPullCertificate's certificate (PEM);
	// sync its kubelet stand-in.
	firstCert, firstKey []byte
	sync                *secretSync
}

// Account is the ServiceAccount whose token the agent's kubeconfig holds.
func (a *PullMember) Account() string { return a.account }

// Agent is the running karmada-agent.
func (a *PullMember) Agent() *controlplane.Process { return a.cp.Process(Agent) }

// JoinPull joins member as Cluster name in Pull mode, by starting
// karmada-agent beside it as `karmadactl register` deploys it (extra flags
// appended last, e.g. the patched binary's guard flags, which the pristine
// one rejects). It returns once the agent's health endpoint answers, which it
// serves only after it registered the Cluster (SyncMode Pull) and built
// its controllers. Its karmada-apiserver credential is a token of
// ServiceAccount karmada-system/karmada-agent-<cluster>, minted with the
// TokenRequest API and bound to cluster-admin: broader than the ClusterRole
// karmadactl register grants (stand-in; what a scenario revokes is the
// token, not a permission). The token is inline in a kubeconfig in a
// Secret volume, as the bootstrap flow's Secret holds the agent's
// certificate. Only one agent runs per control plane.
//
// Flags: --report-secrets=None (the Cluster needs no member credential in
// Pull mode, and the default's token Secrets are filled by
// kube-controller-manager's token controller, which the member does not
// run), --leader-elect=false (one instance), the control plane's status
// frequency, listeners on 127.0.0.1. The agent reaches the member with
// the member's admin kubeconfig (KUBECONFIG), where a pod would use its
// in-cluster ServiceAccount bound to the agent's ClusterRole.
func (cp *ControlPlane) JoinPull(ctx context.Context, name string, member *controlplane.Cluster, extra ...string) (*PullMember, error) {
	a, what, err := cp.newPullMember(name, member, "Pull mode")
	if err != nil {
		return nil, err
	}
	a.account = "karmada-agent-" + name
	token, err := a.mint(ctx, a.account)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	a.token = token
	config, err := cp.agentKubeconfig("karmada-agent", &clientcmdapi.AuthInfo{Token: token})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := a.startAgent(ctx, config, extra); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return a, nil
}

// newPullMember checks that member can join as name in Pull mode.
func (cp *ControlPlane) newPullMember(name string, member *controlplane.Cluster, how string) (*PullMember, string, error) {
	if errs := validation.IsDNS1123Label("karmada-es-" + name); len(errs) > 0 {
		// The cluster controller creates namespace karmada-es-<name>.
		return nil, "", fmt.Errorf("member cluster name %q: %v", name, errs)
	}
	if cp.opts.Binaries[Agent] == "" {
		return nil, "", fmt.Errorf("karmada control plane %s: no %s binary in Options.Binaries", cp.opts.Name, Agent)
	}
	if cp.Process(Agent) != nil {
		return nil, "", fmt.Errorf("karmada control plane %s: %s already runs", cp.opts.Name, Agent)
	}
	what := fmt.Sprintf("karmada control plane %s: joining member cluster %s in %s", cp.opts.Name, name, how)
	return &PullMember{Name: name, API: member, cp: cp}, what, nil
}

// startAgent lays out the kubeconfig volume with config and starts
// karmada-agent with JoinPull's flags and extra.
func (a *PullMember) startAgent(ctx context.Context, config []byte, extra []string) error {
	cp, member := a.cp, a.API
	dir := filepath.Join(cp.opts.Dir, string(Agent))
	var err error
	if a.KubeconfigVolume, err = NewSecretVolume(filepath.Join(dir, "kubeconfig"), map[string][]byte{AgentKubeconfigKey: config}); err != nil {
		return err
	}
	args := []string{
		"--karmada-kubeconfig=" + a.KubeconfigVolume.File(AgentKubeconfigKey),
		"--cluster-name=" + a.Name,
		"--cluster-api-endpoint=" + member.Endpoint(),
		"--report-secrets=None",
		"--leader-elect=false",
		"--cluster-status-update-frequency=" + DefaultStatusUpdateFrequency.String(),
		"--v=" + strconv.Itoa(cp.opts.Verbosity),
	}
	return cp.start(ctx, component{
		name:  Agent,
		ports: 2,
		env:   []string{"KUBECONFIG=" + member.AdminKubeconfig()},
		args: func(ports []int) ([]string, error) {
			return append(slices.Concat(args, []string{
				"--metrics-bind-address=" + hostPort(ports[0]),
				"--health-probe-bind-address=" + hostPort(ports[1]),
			}), extra...), nil
		},
		ready:   func(ports []int) check { return httpCheck(fmt.Sprintf("http://%s/healthz", hostPort(ports[1]))) },
		metrics: 0,
	})
}

// mint creates ServiceAccount sa on karmada-apiserver, binds it to
// cluster-admin and mints a token for it.
func (a *PullMember) mint(ctx context.Context, sa string) (string, error) {
	token, err := a.cp.API.ServiceAccountToken(ctx, SystemNamespace, sa, agentTokenTTL)
	if err != nil {
		return "", err
	}
	if err := a.cp.API.BindClusterAdmin(ctx, SystemNamespace, sa); err != nil {
		return "", err
	}
	return token, nil
}

// agentKubeconfig is a kubeconfig for karmada-apiserver with credential
// auth inline, as user user, and no --karmada-context to choose: the
// patched agent follows the file's current context only.
func (cp *ControlPlane) agentKubeconfig(user string, auth *clientcmdapi.AuthInfo) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-apiserver"] = &clientcmdapi.Cluster{Server: cp.API.Endpoint(), CertificateAuthorityData: cp.API.CAData()}
	cfg.AuthInfos[user] = auth
	cfg.Contexts["karmada"] = &clientcmdapi.Context{Cluster: "karmada-apiserver", AuthInfo: user}
	cfg.CurrentContext = "karmada"
	return clientcmd.Write(*cfg)
}

// Rotate rotates the agent's karmada-apiserver credential the way an
// operator would, in the well-ordered way: a new ServiceAccount
// (karmada-agent-<cluster>-rotated-<n>, bound to cluster-admin), a
// kubeconfig with its token published into the volume (a new timestamped
// folder and an atomic ..data swap, as the kubelet updates a Secret
// volume), then every token of the previous ServiceAccount revoked
// (deleted and created again, controlplane.RevokeServiceAccount). It
// returns once karmada-apiserver rejects the old token.
func (a *PullMember) Rotate(ctx context.Context) (Rotation, error) {
	a.rotations++
	r := Rotation{From: a.account, To: fmt.Sprintf("karmada-agent-%s-rotated-%d", a.Name, a.rotations)}
	what := fmt.Sprintf("rotating %s's karmada-apiserver credential from ServiceAccount %s to %s", Agent, r.From, r.To)
	token, err := a.mint(ctx, r.To)
	if err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	config, err := a.cp.agentKubeconfig("karmada-agent", &clientcmdapi.AuthInfo{Token: token})
	if err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	if err := a.KubeconfigVolume.Publish(map[string][]byte{AgentKubeconfigKey: config}); err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	r.Written = time.Now()
	old := a.token
	a.account, a.token = r.To, token
	if err := a.cp.API.RevokeServiceAccount(ctx, SystemNamespace, r.From, old); err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	r.Revoked = time.Now()
	return r, nil
}

// Revoke revokes the agent's current ServiceAccount (deleted and created
// again) and publishes no new kubeconfig: its credential is rejected for
// good. It returns once karmada-apiserver rejects the token.
func (a *PullMember) Revoke(ctx context.Context) error {
	if err := a.cp.API.RevokeServiceAccount(ctx, SystemNamespace, a.account, a.token); err != nil {
		return fmt.Errorf("revoking %s's karmada-apiserver credential (ServiceAccount %s): %w", Agent, a.account, err)
	}
	return nil
}

// LeaseRenewed is when the agent last renewed its Cluster's lease
// (coordination.k8s.io Lease <cluster> in ClusterNamespace on
// karmada-apiserver), which the controller-manager reads to tell a Pull
// member's agent is alive.
func (a *PullMember) LeaseRenewed(ctx context.Context) (time.Time, error) {
	l, err := a.cp.API.Kubernetes().CoordinationV1().Leases(ClusterNamespace).Get(ctx, a.Name, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading Lease %s/%s: %w", ClusterNamespace, a.Name, err)
	}
	if l.Spec.RenewTime == nil {
		return time.Time{}, nil
	}
	return l.Spec.RenewTime.Time, nil
}
