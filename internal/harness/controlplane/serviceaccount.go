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

// tokenPoll is how often RevokeServiceAccount checks the old token: the
// authenticator sees the deletion through an informer, within milliseconds.
const tokenPoll = 100 * time.Millisecond

// revokeTimeout bounds the wait for an old token to stop working: at most
// the server's token cache (10 s) plus an informer's lag in practice; a
// minute covers a loaded machine.
const revokeTimeout = time.Minute

// ServiceAccountToken ensures the namespace and ServiceAccount exist and
// mints a token for it with the TokenRequest API. ttl 0 means the server's
// default (one hour); otherwise it must be at least 10 minutes.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string, ttl time.Duration) (string, error) {
	what := fmt.Sprintf("cluster %s: ServiceAccount %s/%s", c.name, namespace, name)
	if ttl != 0 && ttl < minTokenTTL {
		return "", fmt.Errorf("%s: token lifetime %s is below the TokenRequest minimum of %s", what, ttl, minTokenTTL)
	}
	if err := c.ensureServiceAccount(ctx, namespace, name); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	req := &authenticationv1.TokenRequest{}
	if ttl != 0 {
		secs := int64(ttl / time.Second)
		req.Spec.ExpirationSeconds = &secs
	}
	resp, err := c.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: minting a token: %w", what, err)
	}
	return resp.Status.Token, nil
}

func (c *Cluster) ensureServiceAccount(ctx context.Context, namespace, name string) error {
	_, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace: %w", err)
	}
	_, err = c.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating: %w", err)
	}
	return nil
}

// BindClusterAdmin binds the ServiceAccount to the cluster-admin
// ClusterRole (ClusterRoleBinding "<namespace>-<name>-cluster-admin").
func (c *Cluster) BindClusterAdmin(ctx context.Context, namespace, name string) error {
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name + "-cluster-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	_, err := c.kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster %s: binding ServiceAccount %s/%s to cluster-admin: %w", c.name, namespace, name, err)
	}
	return nil
}

// RevokeServiceAccount revokes every token of the ServiceAccount by
// deleting it and creating it again: tokens carry the UID of the
// ServiceAccount they were minted for, and with --service-account-lookup
// the server rejects a token whose UID no longer exists ("service account
// UID ... does not match claim"). Bindings name the ServiceAccount, not its
// UID, so they still apply to tokens minted afterwards.
//
// It returns once tokens minted before no longer authenticate. The server
// caches successful token authentications for tokenSuccessCacheTTL, so a
// token used just before the revocation keeps working for up to that long.
// Given the tokens that matter, RevokeServiceAccount waits until each is
// rejected; without them it waits out the cache after the server has seen
// the deletion.
func (c *Cluster) RevokeServiceAccount(ctx context.Context, namespace, name string, tokens ...string) error {
	what := fmt.Sprintf("cluster %s: revoking ServiceAccount %s/%s", c.name, namespace, name)
	// A token of our own that has never authenticated, so no cache holds
	// it: its rejection shows the server has seen the deletion.
	probe, err := c.ServiceAccountToken(ctx, namespace, name, minTokenTTL)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	sa, err := c.kube.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	// The UID precondition makes sure the ServiceAccount deleted is the one
	// the probe token was minted for.
	uid := sa.UID
	if err := c.kube.CoreV1().ServiceAccounts(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return fmt.Errorf("%s: deleting: %w", what, err)
	}
	if _, err := c.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating it again: %w", what, err)
	}
	if err := c.waitRejected(ctx, probe); err != nil {
		return fmt.Errorf("%s: a token minted before still authenticates: %w", what, err)
	}
	seen := time.Now()
	for i, token := range tokens {
		if err := c.waitRejected(ctx, token); err != nil {
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

func (c *Cluster) waitRejected(ctx context.Context, token string) error {
	return wait.PollUntilContextTimeout(ctx, tokenPoll, revokeTimeout, true, func(ctx context.Context) (bool, error) {
		accepted, err := c.TokenAccepted(ctx, token)
		return !accepted, err
	})
}

// TokenAccepted reports whether the server authenticates token, by creating
// a SelfSubjectReview with it: every authenticated user may, whatever RBAC
// grants them, so the answer is about authentication alone. It returns
// false for 401 Unauthorized and an error for anything else unexpected. The
// token appears in no error.
func (c *Cluster) TokenAccepted(ctx context.Context, token string) (bool, error) {
	cfg := rest.AnonymousClientConfig(c.admin)
	cfg.BearerToken = token
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("cluster %s: %w", c.name, err)
	}
	_, err = client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsUnauthorized(err):
		return false, nil
	default:
		return false, fmt.Errorf("cluster %s: checking a token with a SelfSubjectReview: %w", c.name, err)
	}
}
