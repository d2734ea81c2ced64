package karmadacp

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// AgentKubeconfigSecret is the member's Secret karmada-agent's certRotation
// controller renews the certificate in (namespace
// --karmada-kubeconfig-namespace, default karmada-system; key
// AgentKubeconfigKey), as `karmadactl register` creates it.
const AgentKubeconfigSecret = "karmada-kubeconfig"

// secretSyncPoll is how often the kubelet stand-in reads the Secret. The
// kubelet itself takes up to its sync period (a minute) plus its cache's
// TTL to update a Secret volume; the stand-in is quicker, so that a
// scenario's timings are the agent's.
const secretSyncPoll = 250 * time.Millisecond

// JoinPullCertificate is JoinPull with the agent authenticating with a
// client certificate, as `karmadactl register` sets it up: CN
// system:karmada:agent:<name>, O system:karmada:agents, inline in the
// kubeconfig of Secret karmada-system/karmada-kubeconfig on the member, and
// the volume kept in step with that Secret by a kubelet stand-in
// (SecretSyncs). The certificate comes from the control plane's issuer CA
// (Options.CSRSigning is required), valid 61 minutes of which 30 are spent
// (agentCertificateLifetime): with the certRotation controller on
// (extra: --controllers=*,certRotation and a threshold above 0.5) the agent
// renews it at its first check, through a CSR that
// karmada-controller-manager approves and CSRSigner signs. The identity is
// bound to cluster-admin (stand-in, as JoinPull's ServiceAccount).
func (cp *ControlPlane) JoinPullCertificate(ctx context.Context, name string, member *controlplane.Cluster, extra ...string) (*PullMember, error) {
	a, what, err := cp.newPullMember(name, member, "Pull mode with a client certificate")
	if err != nil {
		return nil, err
	}
	if !cp.opts.CSRSigning {
		return nil, fmt.Errorf("%s: the control plane was started without Options.CSRSigning", what)
	}
	user := agentUserPrefix + name
	a.account = user
	if err := bindUserClusterAdmin(ctx, cp.API.Kubernetes(), user); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	a.firstCert, a.firstKey, err = cp.pki.issueAgentCertificate(name, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// certRotation takes the user's name in the kubeconfig for the
	// cluster's (it names the CSR after it), as karmadactl register writes
	// it.
	config, err := cp.agentKubeconfig(name, &clientcmdapi.AuthInfo{ClientCertificateData: a.firstCert, ClientKeyData: a.firstKey})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := ensureNamespace(ctx, member, SystemNamespace); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: AgentKubeconfigSecret},
		Data:       map[string][]byte{AgentKubeconfigKey: config},
	}
	if _, err := member.Kubernetes().CoreV1().Secrets(SystemNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("%s: creating Secret %s/%s on the member: %w", what, SystemNamespace, AgentKubeconfigSecret, err)
	}
	if err := a.startAgent(ctx, config, extra); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	syncCtx, stop := context.WithCancel(context.Background())
	a.sync = &secretSync{published: config}
	cp.mu.Lock()
	cp.cleanups = append(cp.cleanups, stop)
	cp.mu.Unlock()
	go a.sync.run(syncCtx, member.Kubernetes(), a.KubeconfigVolume)
	return a, nil
}

// bindUserClusterAdmin binds user to cluster-admin on karmada-apiserver.
func bindUserClusterAdmin(ctx context.Context, kube kubernetes.Interface, user string) error {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "holdfast-test-" + sanitizeName(user)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding user %s to cluster-admin: %w", user, err)
	}
	return nil
}

// sanitizeName makes a user name an object name: ':' is not allowed.
func sanitizeName(user string) string {
	return strings.ReplaceAll(user, ":", "-")
}

// SecretSync is one update of the agent's kubeconfig Secret the kubelet
// stand-in published into the volume.
type SecretSync struct {
	// At is when the volume held it.
	At time.Time
	// ResourceVersion is the Secret's.
	ResourceVersion string
}

// secretSync is the kubelet stand-in: it keeps the volume's
// AgentKubeconfigKey equal to the member's Secret.
type secretSync struct {
	mu        sync.Mutex
	published []byte
	syncs     []SecretSync
	lastErr   error
}

func (s *secretSync) run(ctx context.Context, kube kubernetes.Interface, vol *SecretVolume) {
	_ = wait.PollUntilContextCancel(ctx, secretSyncPoll, true, func(ctx context.Context) (bool, error) {
		secret, err := kube.CoreV1().Secrets(SystemNamespace).Get(ctx, AgentKubeconfigSecret, metav1.GetOptions{})
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.lastErr = err
			return false, nil
		}
		data := secret.Data[AgentKubeconfigKey]
		if bytes.Equal(data, s.published) {
			return false, nil
		}
		if err := vol.Publish(map[string][]byte{AgentKubeconfigKey: data}); err != nil {
			s.lastErr = err
			return false, nil
		}
		s.published = data
		s.syncs = append(s.syncs, SecretSync{At: time.Now(), ResourceVersion: secret.ResourceVersion})
		return false, nil
	})
}

// SecretSyncs are the Secret updates the kubelet stand-in published into
// the volume (JoinPullCertificate only), and its last error, if any.
func (a *PullMember) SecretSyncs() ([]SecretSync, error) {
	if a.sync == nil {
		return nil, errors.New("no kubelet stand-in: the agent was not joined with JoinPullCertificate")
	}
	a.sync.mu.Lock()
	defer a.sync.mu.Unlock()
	return append([]SecretSync(nil), a.sync.syncs...), a.sync.lastErr
}

// AgentCertificate is the client certificate of an agent's kubeconfig.
type AgentCertificate struct {
	Subject             string
	Issuer              string
	NotBefore, NotAfter time.Time
	// Renewed: not the first certificate JoinPullCertificate issued.
	Renewed bool
}

// SecretCertificate reads the certificate the member's Secret holds now.
func (a *PullMember) SecretCertificate(ctx context.Context) (AgentCertificate, error) {
	secret, err := a.API.Kubernetes().CoreV1().Secrets(SystemNamespace).Get(ctx, AgentKubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		return AgentCertificate{}, fmt.Errorf("reading Secret %s/%s on the member: %w", SystemNamespace, AgentKubeconfigSecret, err)
	}
	cfg, err := clientcmd.Load(secret.Data[AgentKubeconfigKey])
	if err != nil {
		return AgentCertificate{}, fmt.Errorf("Secret %s/%s: %w", SystemNamespace, AgentKubeconfigSecret, err)
	}
	ctxName := cfg.Contexts[cfg.CurrentContext]
	if ctxName == nil || cfg.AuthInfos[ctxName.AuthInfo] == nil {
		return AgentCertificate{}, fmt.Errorf("Secret %s/%s: no user in the current context %q", SystemNamespace, AgentKubeconfigSecret, cfg.CurrentContext)
	}
	certPEM := cfg.AuthInfos[ctxName.AuthInfo].ClientCertificateData
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return AgentCertificate{}, fmt.Errorf("Secret %s/%s: no PEM client certificate", SystemNamespace, AgentKubeconfigSecret)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return AgentCertificate{}, fmt.Errorf("Secret %s/%s: %w", SystemNamespace, AgentKubeconfigSecret, err)
	}
	return AgentCertificate{
		Subject: c.Subject.String(), Issuer: c.Issuer.CommonName,
		NotBefore: c.NotBefore, NotAfter: c.NotAfter,
		Renewed: !bytes.Equal(certPEM, a.firstCert),
	}, nil
}

// WithdrawFirstCertificate makes karmada-apiserver refuse the agent's
// first certificate: its issuer CA is removed from --client-ca-file (a
// rename over the bundle, which kube-apiserver watches), the only way to
// refuse a client certificate before it expires. It returns once a request
// with that certificate gets 401.
func (a *PullMember) WithdrawFirstCertificate(ctx context.Context) error {
	p := a.cp.pki
	if a.firstCert == nil || p.signerCA == nil {
		return errors.New("no first certificate: the agent was not joined with JoinPullCertificate")
	}
	if err := writeAtomically(p.clientCABundleFile(), p.signerCA.CertPEM); err != nil {
		return fmt.Errorf("removing the first certificates' CA from karmada-apiserver's --client-ca-file: %w", err)
	}
	cfg := &rest.Config{
		Host:            a.cp.API.Endpoint(),
		TLSClientConfig: rest.TLSClientConfig{CAData: a.cp.API.CAData(), CertData: a.firstCert, KeyData: a.firstKey},
		Timeout:         5 * time.Second,
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// kube-apiserver reloads the file on the watch event, or within a
	// minute when it misses one.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		return fmt.Errorf("karmada-apiserver still accepts the agent's first certificate after its CA left --client-ca-file: %w", err)
	}
	return nil
}
