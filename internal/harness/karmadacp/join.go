package karmadacp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// Names `karmadactl join` uses (pkg/karmadactl/join and pkg/util's
// credential.go in the pinned tree).
const (
	// ClusterNamespace holds the member credential Secrets on
	// karmada-apiserver and the ServiceAccounts on the member.
	ClusterNamespace = "karmada-cluster"
	// SecretTokenKey and SecretCADataKey are the Secret's keys
	// (clusterv1alpha1.SecretTokenKey, SecretCADataKey).
	SecretTokenKey  = "token"
	SecretCADataKey = "caBundle"
	// karmadaSystemLabel marks namespaces and RBAC Karmada created.
	karmadaSystemLabel = "karmada.io/system"
	// impersonatorAccount is names.GenerateServiceAccountName("impersonator").
	impersonatorAccount = "karmada-impersonator"
)

// memberTokenTTL outlives any run: scenarios revoke tokens, they do not
// wait for them to expire.
const memberTokenTTL = time.Hour

// Member is a member cluster joined to the control plane in Push mode.
type Member struct {
	// Name is the Cluster's name, also its credential Secret's.
	Name string
	// API is the member's kube-apiserver.
	API *controlplane.Cluster
	cp  *ControlPlane
	// account is the member ServiceAccount whose token the Secret holds,
	// token that token.
	account, token string
	rotations      int
}

// Account is the member ServiceAccount whose token the Secret holds now.
func (m *Member) Account() string { return m.account }

// JoinPush joins member as Cluster name the way `karmadactl join` does. On
// the member: namespace karmada-cluster, ServiceAccounts karmada-<name> and
// karmada-impersonator, ClusterRole and ClusterRoleBinding
// karmada-controller-manager:karmada-<name> granting everything. On
// karmada-apiserver: Secret karmada-cluster/<name> with the token and the
// member's CA, Secret <name>-impersonator, and the Cluster (created through
// the aggregated API server) naming both, owning both Secrets.
//
// Stand-in: karmadactl reads each token from the ServiceAccount's legacy
// token Secret, which kube-controller-manager's token controller fills; no
// kube-controller-manager runs on the member, so the tokens are minted with
// the TokenRequest API (one hour) instead. Either is a bearer token of the
// same ServiceAccount, checked the same way.
func (cp *ControlPlane) JoinPush(ctx context.Context, name string, member *controlplane.Cluster) (*Member, error) {
	if errs := validation.IsDNS1123Label("karmada-es-" + name); len(errs) > 0 {
		// The cluster controller creates namespace karmada-es-<name>.
		return nil, fmt.Errorf("member cluster name %q: %v", name, errs)
	}
	m := &Member{Name: name, API: member, cp: cp, account: "karmada-" + name}
	what := fmt.Sprintf("joining member cluster %s", name)
	if err := ensureNamespace(ctx, member, ClusterNamespace); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := m.grant(ctx, m.account); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	token, err := member.ServiceAccountToken(ctx, ClusterNamespace, m.account, memberTokenTTL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	impersonatorToken, err := member.ServiceAccountToken(ctx, ClusterNamespace, impersonatorAccount, memberTokenTTL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	m.token = token
	// karmadactl's cluster ID is the UID of the member's kube-system.
	ks, err := member.Kubernetes().CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: reading the cluster ID: %w", what, err)
	}

	secrets := cp.API.Kubernetes().CoreV1().Secrets(ClusterNamespace)
	labels := map[string]string{karmadaSystemLabel: "true"}
	for _, s := range []*corev1.Secret{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: name + "-impersonator", Labels: labels},
			Data:       map[string][]byte{SecretTokenKey: []byte(impersonatorToken)},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: ClusterNamespace, Name: name, Labels: labels},
			Data:       map[string][]byte{SecretCADataKey: member.CAData(), SecretTokenKey: []byte(token)},
		},
	} {
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("%s: creating Secret %s/%s on %s: %w", what, ClusterNamespace, s.Name, cp.API.Name(), err)
		}
	}
	cluster, err := cp.API.Dynamic().Resource(ClusterGVR).Create(ctx, PushCluster(name, member.Endpoint(), string(ks.UID)), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: creating the Cluster: %w", what, err)
	}
	owner, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{
		*metav1.NewControllerRef(cluster, ClusterGVR.GroupVersion().WithKind("Cluster")),
	}}})
	if err != nil {
		return nil, err
	}
	for _, s := range []string{name + "-impersonator", name} {
		if _, err := secrets.Patch(ctx, s, types.MergePatchType, owner, metav1.PatchOptions{}); err != nil {
			return nil, fmt.Errorf("%s: making the Cluster own Secret %s/%s: %w", what, ClusterNamespace, s, err)
		}
	}
	return m, nil
}

// PushCluster is the Cluster `karmadactl join` creates for a member at
// endpoint with cluster ID id.
func PushCluster(name, endpoint, id string) *unstructured.Unstructured {
	ref := func(n string) map[string]any { return map[string]any{"namespace": ClusterNamespace, "name": n} }
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ClusterGVR.GroupVersion().String(),
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"id":                    id,
			"apiEndpoint":           endpoint,
			"syncMode":              "Push",
			"secretRef":             ref(name),
			"impersonatorSecretRef": ref(name + "-impersonator"),
		},
	}}
}

// grant creates ServiceAccount sa on the member and binds it to the
// ClusterRole karmadactl creates for the cluster (ClusterPolicyRules:
// every verb on every resource, GET on every non-resource URL). The first
// account of a member names the ClusterRole; later ones (rotations) are
// bound to the same.
func (m *Member) grant(ctx context.Context, sa string) error {
	kube := m.API.Kubernetes()
	labels := map[string]string{karmadaSystemLabel: "true"}
	_, err := kube.CoreV1().ServiceAccounts(ClusterNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: labels}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ServiceAccount %s/%s: %w", ClusterNamespace, sa, err)
	}
	role := "karmada-controller-manager:karmada-" + m.Name
	_, err = kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
		},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", role, err)
	}
	binding := role
	if sa != "karmada-"+m.Name {
		binding = role + ":" + sa
	}
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding, Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ClusterNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", binding, err)
	}
	return nil
}

// Rotation is what Rotate did.
type Rotation struct {
	// From and To are the ServiceAccounts whose token the Secret held
	// before and holds after.
	From, To string
	// Written is when the new token was in the Secret; Revoked when the
	// member rejected the old one.
	Written, Revoked time.Time
}

// Rotate rotates the member's credential the way an operator would, in
// the well-ordered way (the Secret never holds a rejected token): Replace,
// then every token of the previous ServiceAccount revoked (deleted and
// created again, see controlplane.RevokeServiceAccount). It returns once
// the member rejects the old token.
func (m *Member) Rotate(ctx context.Context) (Rotation, error) {
	return m.rotate(ctx, m.WriteToken)
}

// RotateSecretMissing is Rotate with the Secret missing for a while (issue
// 16's second round): the Secret is deleted first, the new ServiceAccount's
// token minted, and the Secret created again with that token missing after
// the deletion (as it was but for the token: labels, caBundle, owned by
// the Cluster); then the previous ServiceAccount is revoked. The Secret
// never holds a rejected token, but for missing there is none to read.
func (m *Member) RotateSecretMissing(ctx context.Context, missing time.Duration) (Rotation, error) {
	secrets := m.cp.API.Kubernetes().CoreV1().Secrets(ClusterNamespace)
	current, err := secrets.Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return Rotation{}, fmt.Errorf("reading Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	if err := secrets.Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil {
		return Rotation{}, fmt.Errorf("deleting Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	deleted := time.Now()
	return m.rotate(ctx, func(ctx context.Context, token string) error {
		// The gap is the stimulus itself, not a wait for a condition.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(deleted.Add(missing))):
		}
		again := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ClusterNamespace, Name: m.Name,
				Labels: current.Labels, OwnerReferences: current.OwnerReferences,
			},
			Type: current.Type,
			Data: maps.Clone(current.Data),
		}
		again.Data[SecretTokenKey] = []byte(token)
		if _, err := secrets.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Secret %s/%s again: %w", ClusterNamespace, m.Name, err)
		}
		return nil
	})
}

// rotate is Replace with write putting the new token in place, then the
// previous ServiceAccount revoked.
func (m *Member) rotate(ctx context.Context, write func(context.Context, string) error) (Rotation, error) {
	old := m.token
	r, err := m.replace(ctx, write)
	if err != nil {
		return r, err
	}
	if err := m.API.RevokeServiceAccount(ctx, ClusterNamespace, r.From, old); err != nil {
		return r, fmt.Errorf("rotating member cluster %s's credential from ServiceAccount %s to %s: %w", m.Name, r.From, r.To, err)
	}
	r.Revoked = time.Now()
	return r, nil
}

// Replace gives the member's credential to a new ServiceAccount on the
// member with the join's permissions and writes its token into the
// Secret, leaving the previous one valid: the first half of Rotate, and
// the late half of a rotation done in the wrong order (Revoke first).
func (m *Member) Replace(ctx context.Context) (Rotation, error) {
	return m.replace(ctx, m.WriteToken)
}

func (m *Member) replace(ctx context.Context, write func(context.Context, string) error) (Rotation, error) {
	p, err := m.PrepareRotation(ctx)
	if err != nil {
		return p.r, err
	}
	return p.commit(ctx, write)
}

// PendingRotation is the first half of Replace: the new ServiceAccount
// with the join's permissions and its token, not yet in the Secret. A
// scenario that rotates many members at once prepares them all first, so
// that the storm itself is only the Secret writes and revocations.
type PendingRotation struct {
	m     *Member
	r     Rotation
	token string
}

// PrepareRotation grants a new ServiceAccount on the member and mints its
// token; Write puts it in the Secret. Prepare and write one rotation at a
// time per member.
func (m *Member) PrepareRotation(ctx context.Context) (*PendingRotation, error) {
	m.rotations++
	p := &PendingRotation{m: m, r: Rotation{From: m.account, To: fmt.Sprintf("karmada-%s-rotated-%d", m.Name, m.rotations)}}
	if err := m.grant(ctx, p.r.To); err != nil {
		return p, fmt.Errorf("%s: %w", p.what(), err)
	}
	token, err := m.API.ServiceAccountToken(ctx, ClusterNamespace, p.r.To, memberTokenTTL)
	if err != nil {
		return p, fmt.Errorf("%s: %w", p.what(), err)
	}
	p.token = token
	return p, nil
}

// Write puts the prepared token into the member's Secret (WriteToken);
// from then on it is the member's credential.
func (p *PendingRotation) Write(ctx context.Context) (Rotation, error) {
	return p.commit(ctx, p.m.WriteToken)
}

func (p *PendingRotation) what() string {
	return fmt.Sprintf("rotating member cluster %s's credential from ServiceAccount %s to %s", p.m.Name, p.r.From, p.r.To)
}

func (p *PendingRotation) commit(ctx context.Context, write func(context.Context, string) error) (Rotation, error) {
	if err := write(ctx, p.token); err != nil {
		return p.r, fmt.Errorf("%s: %w", p.what(), err)
	}
	p.r.Written = time.Now()
	p.m.account, p.m.token = p.r.To, p.token
	return p.r, nil
}

// Revoke revokes the member's current ServiceAccount (deleted and created
// again) without writing another token: the Secret keeps a token the
// member rejects, as when a rotation revokes first and writes the Secret
// late. It returns once the member rejects the token.
func (m *Member) Revoke(ctx context.Context) error {
	if err := m.API.RevokeServiceAccount(ctx, ClusterNamespace, m.account, m.token); err != nil {
		return fmt.Errorf("revoking member cluster %s's credential (ServiceAccount %s): %w", m.Name, m.account, err)
	}
	return nil
}

// WriteToken puts token into the member's Secret on karmada-apiserver.
func (m *Member) WriteToken(ctx context.Context, token string) error {
	secrets := m.cp.API.Kubernetes().CoreV1().Secrets(ClusterNamespace)
	s, err := secrets.Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	s.Data[SecretTokenKey] = []byte(token)
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	return nil
}

// WriteCABundle puts bundle into the member's Secret on karmada-apiserver
// under caBundle, as a CA rotation publishes a renewed member CA.
func (m *Member) WriteCABundle(ctx context.Context, bundle []byte) error {
	secrets := m.cp.API.Kubernetes().CoreV1().Secrets(ClusterNamespace)
	s, err := secrets.Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	s.Data[SecretCADataKey] = bundle
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the caBundle of Secret %s/%s: %w", ClusterNamespace, m.Name, err)
	}
	return nil
}

// ClusterReady reports the Cluster's Ready condition ("True", "False",
// "Unknown" or "" before the controller-manager set one) and when it last
// changed.
func (m *Member) ClusterReady(ctx context.Context) (status string, since time.Time, err error) {
	o, err := m.cp.API.Dynamic().Resource(ClusterGVR).Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reading Cluster %s: %w", m.Name, err)
	}
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if cond["type"] != "Ready" {
			continue
		}
		status, _ = cond["status"].(string)
		if s, _ := cond["lastTransitionTime"].(string); s != "" {
			since, _ = time.Parse(time.RFC3339, s)
		}
		return status, since, nil
	}
	return "", time.Time{}, nil
}

// WaitReady waits until the Cluster is Ready.
func (m *Member) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		status, _, err := m.ClusterReady(ctx)
		if err == nil && status == "True" {
			return nil
		}
		last = "Ready=" + status
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("member cluster %s not Ready within %s (last: %s)", m.Name, timeout, last)
		case <-time.After(readyPoll):
		}
	}
}
