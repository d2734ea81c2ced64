package controlplane

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// minTokenTTL is the shortest lifetime the TokenRequest API accepts.
const minTokenTTL = 10 * time.Minute

// tokenPoll is how often Revoke checks the old token: the authenticator
// sees the deletion through an informer, within milliseconds.
const tokenPoll = 100 * time.Millisecond

// revokeTimeout bounds the wait for an old token to stop working: at most
// the server's token cache (10 s) plus an informer's lag in practice; a
// minute covers a loaded machine.
const revokeTimeout = time.Minute

// ServiceAccounts mints, binds and revokes ServiceAccount credentials on
// one API server through its admin config: a Cluster's, or that of an API
// server the harness did not start (a chart's karmada-apiserver), so that
// both revoke a token the same way.
type ServiceAccounts struct {
	name  string
	admin *rest.Config
	kube  kubernetes.Interface
}

// NewServiceAccounts returns ServiceAccounts for the API server admin
// reaches; name says which server in errors (e.g. "karmada-apiserver").
// admin must authenticate with a credential that stays valid when the
// ServiceAccounts are revoked (a client certificate or a static token);
// TokenAccepted uses its server and trust, not its credential.
func NewServiceAccounts(name string, admin *rest.Config) (*ServiceAccounts, error) {
	if admin == nil {
		return nil, fmt.Errorf("%s: no admin config", name)
	}
	admin = rest.CopyConfig(admin)
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return newServiceAccounts(name, admin, kube), nil
}

// newServiceAccounts shares a Cluster's admin client rather than building
// a second one.
func newServiceAccounts(name string, admin *rest.Config, kube kubernetes.Interface) *ServiceAccounts {
	return &ServiceAccounts{name: name, admin: admin, kube: kube}
}

// Token ensures the namespace and ServiceAccount exist and mints a token
// for it with the TokenRequest API. ttl 0 means the server's default (one
// hour); otherwise it must be at least 10 minutes.
func (s *ServiceAccounts) Token(ctx context.Context, namespace, name string, ttl time.Duration) (string, error) {
	what := fmt.Sprintf("%s: ServiceAccount %s/%s", s.name, namespace, name)
	if ttl != 0 && ttl < minTokenTTL {
		return "", fmt.Errorf("%s: token lifetime %s is below the TokenRequest minimum of %s", what, ttl, minTokenTTL)
	}
	if err := s.ensure(ctx, namespace, name); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	req := &authenticationv1.TokenRequest{}
	if ttl != 0 {
		secs := int64(ttl / time.Second)
		req.Spec.ExpirationSeconds = &secs
	}
	resp, err := s.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: minting a token: %w", what, err)
	}
	return resp.Status.Token, nil
}

func (s *ServiceAccounts) ensure(ctx context.Context, namespace, name string) error {
	_, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace: %w", err)
	}
	_, err = s.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating: %w", err)
	}
	return nil
}

// BindClusterAdmin binds the ServiceAccount to the cluster-admin
// ClusterRole (ClusterRoleBinding "<namespace>-<name>-cluster-admin").
func (s *ServiceAccounts) BindClusterAdmin(ctx context.Context, namespace, name string) error {
	return s.BindClusterAdminAs(ctx, namespace+"-"+name+"-cluster-admin", namespace, name)
}

// BindClusterAdminAs is BindClusterAdmin with the ClusterRoleBinding named
// binding, for a test whose binding name is part of what it sets up (the
// node's own-credential flow names it after the ServiceAccount, as an
// operator would). An existing binding of that name is left as it is.
func (s *ServiceAccounts) BindClusterAdminAs(ctx context.Context, binding, namespace, name string) error {
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	_, err := s.kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%s: binding ServiceAccount %s/%s to cluster-admin: %w", s.name, namespace, name, err)
	}
	return nil
}

// Revoke revokes every token of the ServiceAccount by deleting it and
// creating it again: tokens carry the UID of the ServiceAccount they were
// minted for, and with --service-account-lookup (kube-apiserver's default)
// the server rejects a token whose UID no longer exists ("service account
// UID ... does not match claim"). Bindings name the ServiceAccount, not
// its UID, so they still apply to tokens minted afterwards.
//
// It returns once tokens minted before no longer authenticate. The server
// caches successful token authentications for tokenSuccessCacheTTL, so a
// token used just before the revocation keeps working for up to that long.
// Given the tokens that matter, Revoke waits until each is rejected;
// without them it waits out the cache after the server has seen the
// deletion.
func (s *ServiceAccounts) Revoke(ctx context.Context, namespace, name string, tokens ...string) error {
	what := fmt.Sprintf("%s: revoking ServiceAccount %s/%s", s.name, namespace, name)
	// A token of our own that has never authenticated, so no cache holds
	// it: its rejection shows the server has seen the deletion.
	probe, err := s.Token(ctx, namespace, name, minTokenTTL)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	sa, err := s.kube.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	// The UID precondition makes sure the ServiceAccount deleted is the one
	// the probe token was minted for.
	uid := sa.UID
	if err := s.kube.CoreV1().ServiceAccounts(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return fmt.Errorf("%s: deleting: %w", what, err)
	}
	if _, err := s.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating it again: %w", what, err)
	}
	if err := s.waitRejected(ctx, probe); err != nil {
		return fmt.Errorf("%s: a token minted before still authenticates: %w", what, err)
	}
	seen := time.Now()
	for i, token := range tokens {
		if err := s.waitRejected(ctx, token); err != nil {
			return fmt.Errorf("%s: token %d of %d still authenticates: %w", what, i+1, len(tokens), err)
		}
	}
	if len(tokens) > 0 {
		return nil
	}
	// Every cached success was cached before the server saw the deletion,
	// so it has expired tokenSuccessCacheTTL after that.
	t := time.NewTimer(time.Until(seen.Add(tokenSuccessCacheTTL)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting out the token cache: %w", what, context.Cause(ctx))
	case <-t.C:
		return nil
	}
}

// tokenSuccessCacheTTL is how long kube-apiserver keeps a successful token
// authentication (BuiltInAuthenticationOptions.TokenSuccessCacheTTL in
// k8s.io/kubernetes/pkg/kubeapiserver/options; no flag sets it).
const tokenSuccessCacheTTL = 10 * time.Second

func (s *ServiceAccounts) waitRejected(ctx context.Context, token string) error {
	return wait.PollUntilContextTimeout(ctx, tokenPoll, revokeTimeout, true, func(ctx context.Context) (bool, error) {
		accepted, err := s.TokenAccepted(ctx, token)
		return !accepted, err
	})
}

// TokenAccepted reports whether the server authenticates token, by creating
// a SelfSubjectReview with it: every authenticated user may, whatever RBAC
// grants them, so the answer is about authentication alone. It returns
// false for 401 Unauthorized and an error for anything else unexpected. The
// token appears in no error.
func (s *ServiceAccounts) TokenAccepted(ctx context.Context, token string) (bool, error) {
	cfg := rest.AnonymousClientConfig(s.admin)
	cfg.BearerToken = token
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.name, err)
	}
	_, err = client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsUnauthorized(err):
		return false, nil
	default:
		return false, fmt.Errorf("%s: checking a token with a SelfSubjectReview: %w", s.name, err)
	}
}

// ServiceAccountToken is ServiceAccounts.Token on this cluster.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string, ttl time.Duration) (string, error) {
	return c.accounts.Token(ctx, namespace, name, ttl)
}

// BindClusterAdmin is ServiceAccounts.BindClusterAdmin on this cluster.
func (c *Cluster) BindClusterAdmin(ctx context.Context, namespace, name string) error {
	return c.accounts.BindClusterAdmin(ctx, namespace, name)
}

// RevokeServiceAccount is ServiceAccounts.Revoke on this cluster.
func (c *Cluster) RevokeServiceAccount(ctx context.Context, namespace, name string, tokens ...string) error {
	return c.accounts.Revoke(ctx, namespace, name, tokens...)
}

// TokenAccepted is ServiceAccounts.TokenAccepted on this cluster.
func (c *Cluster) TokenAccepted(ctx context.Context, token string) (bool, error) {
	return c.accounts.TokenAccepted(ctx, token)
}
