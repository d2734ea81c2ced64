//go:build e2e

package estimator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

const (
	// binaryName is the shipped binary under test (pins.txt's build line).
	binaryName = "karmada-scheduler-estimator"
	// memberName is the member cluster the estimator serves (--cluster-name).
	memberName = "member1"
	// estimatorNamespace holds the estimator's ServiceAccounts on the member.
	estimatorNamespace = "karmada-estimator"
	// firstAccount is the ServiceAccount of the token the estimator starts
	// with; rotatedAccount that of the token a token rotation writes, so the
	// member's audit log tells the two apart by user.
	firstAccount   = "estimator"
	rotatedAccount = "estimator-rotated"
	// volumeKey is the Secret key the kubeconfig volume projects.
	volumeKey = "kubeconfig"
)

const (
	// readyTimeout bounds the estimator's start: its gRPC port opens once
	// its informers have synced, a second or two after the start.
	readyTimeout = time.Minute
	// recoverTimeout bounds the patched build's way back to a correct
	// answer; it takes seconds (a stat per second, a read at once on a 401
	// or a TLS failure), the bound is for a loaded machine.
	recoverTimeout = time.Minute
	// reflectorRetryBound bounds the wait for the pristine build's first
	// refused request after the Node was created: client-go's reflector
	// retries a failed list with a backoff capped at 30 s.
	reflectorRetryBound = time.Minute
	// blindSettle is how long the pristine build is still asked after its
	// informers were refused with the Node in place: a relist that had
	// succeeded would have reached the answer within milliseconds.
	blindSettle = 10 * time.Second
	// poll is how often the answer and the log are read.
	poll = 100 * time.Millisecond
)

// request is what each replica asks for: one CPU. The Nodes' allocatable
// CPUs divide by it (memory and pods are ample), so the right answer is the
// sum of their CPUs.
var request = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}

// initialNodes are the member's Nodes when the estimator starts (4 + 2
// CPUs: 6 replicas); addedNode is created after the rotation (9).
var (
	initialNodes = []testNode{{"node-a", "4"}, {"node-b", "2"}}
	addedNode    = testNode{"node-c", "3"}
)

const (
	answerBefore = 6
	answerAfter  = 9
)

type testNode struct{ name, cpu string }

// standIns are stated in every scenario's notes.
var standIns = []string{
	"stand-in: the member cluster is etcd + kube-apiserver only (no kubelet): its Nodes are objects with status.allocatable written by the suite (cpu 4 and 2, then a third with 3; memory 16Gi, pods 110 each); MaxAvailableReplicas asks for cpu 1 per replica",
	"stand-in: the estimator's tokens are minted with the TokenRequest API; its kubeconfig is a folder laid out as a kubelet Secret volume (kubeconfig -> ..data/kubeconfig, a change is a swap of ..data), token and CA inline",
	"stand-in: the estimator's RBAC on the member is a ClusterRole granting get/list/watch on what its informers read (nodes, pods, resourcequotas, apps replicasets and deployments), not cluster-admin",
}

// grpcNote says how a row observes what the estimator answers the
// scheduler.
const grpcNote = "stand-in: the scheduler's side is the suite's own gRPC call, MaxAvailableReplicas for member1 every 100 ms (protowire over HTTP/2 without TLS; the estimator serves gRPC without TLS)"

// certNote is cert-rotation's stand-in: how a client certificate is
// revoked.
const certNote = "stand-in: member1 trusts client certificates of two CAs of the suite (--client-ca-file); the estimator's first certificate (CN karmada-scheduler-estimator, bound to the ClusterRole) is revoked by removing its CA from that file (kube-apiserver reloads it on change): Kubernetes has no revocation list for client certificates"

// env is one scenario's member cluster and estimator.
type env struct {
	build  karmadacp.Build
	member *controlplane.Cluster
	audit  string
	vol    *karmadacp.SecretVolume
	// token is the estimator's first token.
	token string
	// certs are the client certificates of a certificate row (else nil).
	certs  *testpki.RevocableClients
	est    *controlplane.Process
	client *Client
	// metricsURL is the estimator's /metrics.
	metricsURL string
}

// newEnv starts the member, sets up the estimator's account, Nodes and
// kubeconfig volume, and starts the estimator of build b; it returns once
// the estimator gives the right answer. With clientCerts the member trusts
// client certificates of two CAs (env.certs) and the estimator's
// kubeconfig holds a certificate of the first instead of a token.
func newEnv(t *testing.T, s *e2ereport.Run, b karmadacp.Build, clientCerts ...bool) *env {
	t.Helper()
	ctx := t.Context()
	root, err := toolcache.Root()
	s.Check(err)
	built, err := build.LocateDefault(root, "karmada", b == karmadacp.Pristine)
	s.Check(err)
	built.Make = "e2e-binaries"
	bin, err := built.Binary(binaryName)
	s.Check(err)
	v, err := karmada.BinaryVersion(ctx, bin)
	s.Check(err)
	recorder.SetVersion(fmt.Sprintf("%s (%s)", binaryName, b), v)
	recorder.SetVersion("etcd", toolcache.Etcd.Version)
	recorder.SetVersion("kube-apiserver (member)", toolcache.KubeAPIServer.Version)

	dir := filepath.Join(t.TempDir(), memberName)
	e := &env{build: b, audit: filepath.Join(dir, "logs", "audit.log")}
	auditFlags, err := controlplane.AuditFlags(filepath.Join(t.TempDir(), "audit-policy"), e.audit)
	s.Check(err)
	if len(clientCerts) > 0 && clientCerts[0] {
		e.certs, err = testpki.NewRevocableClients(filepath.Join(t.TempDir(), "client-ca"), certUser, time.Now())
		s.Check(err)
		auditFlags = append(auditFlags, "--client-ca-file="+e.certs.Bundle)
	}
	e.member = controlplane.StartForTest(t, controlplane.Options{Name: memberName, Dir: dir, ExtraAPIServerFlags: auditFlags})

	e.token, err = e.member.ServiceAccountToken(ctx, estimatorNamespace, firstAccount, 0)
	s.Check(err)
	s.Check(e.grantRBAC(ctx))
	for _, n := range initialNodes {
		s.Check(e.createNode(ctx, n))
	}
	var cfg []byte
	if e.certs != nil {
		cfg, err = e.certKubeconfig(e.certs.First, e.member.CAData())
	} else {
		cfg, err = e.kubeconfig(e.token, e.member.CAData())
	}
	s.Check(err)
	e.vol, err = karmadacp.NewSecretVolume(filepath.Join(t.TempDir(), "kubeconfig-volume"), map[string][]byte{volumeKey: cfg})
	s.Check(err)

	ports := make([]int, 3)
	for i := range ports {
		ports[i], err = controlplane.FreePort()
		s.Check(err)
	}
	e.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1])
	e.est, err = controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
		Name: fmt.Sprintf("%s (%s)", binaryName, b),
		Path: bin,
		Args: []string{
			"--kubeconfig=" + e.vol.File(volumeKey),
			"--cluster-name=" + memberName,
			fmt.Sprintf("--server-port=%d", ports[0]),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[1]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[2]),
			// Upstream's artifacts run the estimator at --v=4; 3 keeps the
			// log (kept for a failed test) to the cache's events.
			"--v=3",
		},
		// In the member's log folder, which a failed test keeps.
		LogFile: filepath.Join(e.member.LogDir(), binaryName+".log"),
	})
	s.Check(err)
	t.Cleanup(func() { _ = e.est.Stop(5 * time.Second) })
	e.client = NewClient(fmt.Sprintf("127.0.0.1:%d", ports[0]))

	begin := time.Now()
	if err := e.waitAnswer(ctx, answerBefore, readyTimeout); err != nil {
		s.Fatalf("before the rotation: %v", err)
	}
	s.Timing("start-to-correct-answer", time.Since(begin))
	return e
}

// protoMessagePanic is the estimator dying on its first gRPC request when
// built without upstream's build tag kubernetes_protomessage_one_more_release
// (Karmada's hack/build.sh passes it): with k8s.io/api v0.35 the Kubernetes
// types its estimator.proto imports are protobuf messages only under that
// tag, and decoding any request resolves them.
var protoMessagePanic = regexp.MustCompile(`panic: message \*v1\.\w+ is neither a v1 or v2 Message`)

// panicLine is ": <the panic line>" when log has one, with what it means
// when it is protoMessagePanic.
func panicLine(log string) string {
	if m := protoMessagePanic.FindString(log); m != "" {
		return ": " + m + " (built without -tags kubernetes_protomessage_one_more_release, which upstream's hack/build.sh passes)"
	}
	if i := strings.Index(log, "panic: "); i >= 0 {
		line, _, _ := strings.Cut(log[i:], "\n")
		return ": " + line
	}
	return ""
}

// grantRBAC lets both of the estimator's ServiceAccounts read what its
// informers list and watch (cmd/scheduler-estimator: nodes, pods and
// replicasets through the informer factory, resourcequotas for the quota
// plugin, deployments through the generic informer manager).
func (e *env) grantRBAC(ctx context.Context) error {
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "holdfast-e2e-estimator"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "resourcequotas"}, Verbs: read},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "deployments"}, Verbs: read},
		},
	}
	kube := e.member.Kubernetes()
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("member %s: ClusterRole %s: %w", memberName, role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Namespace: estimatorNamespace, Name: firstAccount},
			{Kind: rbacv1.ServiceAccountKind, Namespace: estimatorNamespace, Name: rotatedAccount},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: certUser},
		},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("member %s: ClusterRoleBinding %s: %w", memberName, binding.Name, err)
	}
	return nil
}

// createNode is CreateReadyNode on the member.
func (e *env) createNode(ctx context.Context, n testNode) error {
	if err := CreateReadyNode(ctx, e.member.Kubernetes(), n.name, n.cpu); err != nil {
		return fmt.Errorf("member %s: %w", memberName, err)
	}
	return nil
}

// kubeconfig is the estimator's kubeconfig: the member's endpoint, ca
// inline (certificate-authority-data), token inline.
func (e *env) kubeconfig(token string, ca []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[memberName] = &clientcmdapi.Cluster{Server: e.member.Endpoint(), CertificateAuthorityData: ca}
	cfg.AuthInfos[memberName] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[memberName] = &clientcmdapi.Context{Cluster: memberName, AuthInfo: memberName}
	cfg.CurrentContext = memberName
	return clientcmd.Write(*cfg)
}

// certKubeconfig is kubeconfig with c, a client certificate and key,
// inline instead of a token.
func (e *env) certKubeconfig(c testpki.KeyPair, ca []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[memberName] = &clientcmdapi.Cluster{Server: e.member.Endpoint(), CertificateAuthorityData: ca}
	cfg.AuthInfos[memberName] = &clientcmdapi.AuthInfo{ClientCertificateData: c.Cert, ClientKeyData: c.Key}
	cfg.Contexts[memberName] = &clientcmdapi.Context{Cluster: memberName, AuthInfo: memberName}
	cfg.CurrentContext = memberName
	return clientcmd.Write(*cfg)
}

// answer asks the estimator how many one-CPU replicas member1 can take.
func (e *env) answer(ctx context.Context) (int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return e.client.MaxAvailableReplicas(ctx, memberName, request)
}

// waitAnswer polls until the estimator answers want.
func (e *env) waitAnswer(ctx context.Context, want int32, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		got, err := e.answer(ctx)
		switch {
		case err == nil && got == want:
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = fmt.Sprintf("answered %d", got)
		}
		if e.est.Exited() {
			return fmt.Errorf("%s exited (code %d) before answering %d%s; last: %s", e.est.Name(), e.est.ExitCode(), want, panicLine(e.est.Log()), last)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer %d within %s; last: %s", e.est.Name(), want, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// estimatorRequests are the member's audit events of the estimator's
// requests received from since: its client-go user agent names the binary.
func (e *env) estimatorRequests(since time.Time) ([]controlplane.AuditEvent, error) {
	events, err := controlplane.ReadAudit(e.audit)
	if err != nil {
		return nil, err
	}
	var out []controlplane.AuditEvent
	for _, ev := range controlplane.ReceivedIn(events, since, time.Now().Add(time.Hour)) {
		if strings.HasPrefix(ev.UserAgent, binaryName+"/") {
			out = append(out, ev)
		}
	}
	return out, nil
}

// accountUser is the user a ServiceAccount's token authenticates as.
func accountUser(name string) string {
	return "system:serviceaccount:" + estimatorNamespace + ":" + name
}

// requestsBy counts the events of user ("": unauthenticated) answered
// with HTTP code code.
func requestsBy(events []controlplane.AuditEvent, user string, code int) int {
	n := 0
	for _, ev := range events {
		if ev.User.Username == user && ev.ResponseStatus.Code == code {
			n++
		}
	}
	return n
}

// credentialMetrics are the estimator's holdfast_kubeconfig_credential_*
// series (patch 0005's, through pkg/membercred), "none" on a build without
// them.
func (e *env) credentialMetrics(ctx context.Context) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.metricsURL, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "holdfast_kubeconfig_credential_") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "none"
	}
	return strings.Join(lines, "; ")
}
