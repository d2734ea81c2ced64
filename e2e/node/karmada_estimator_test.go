//go:build e2e

package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"

	"github.com/holdfast-dist/holdfast/e2e/estimator"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

const (
	// estimatorUser is the estimator's client certificate's CN on member1.
	estimatorUser = "karmada-scheduler-estimator"
	// estimatorDeployment is the chart's estimator for member1, its gRPC
	// port the chart's Service's.
	estimatorDeployment = "karmada-scheduler-estimator-" + memberClusterName
	estimatorGRPCPort   = "10352"
	// estimatorFollowBound bounds the kubelet's update of the estimator's
	// Secret volume after helm upgrade and the estimator taking it: the
	// kubelet resyncs a pod's volumes every minute (plus jitter), its
	// Secret cache is watch-based.
	estimatorFollowBound = 3 * time.Minute
	// estimatorSecret is the chart's Secret of member1's kubeconfig, and
	// its key.
	estimatorSecret = memberClusterName + "-kubeconfig"
	// estimatorAccountNamespace holds the estimator's ServiceAccounts on
	// member1.
	estimatorAccountNamespace = "default"
)

// estimatorPickedUpCert is the patched estimator's line when it takes a
// rotated client certificate from its kubeconfig.
var estimatorPickedUpCert = regexp.MustCompile(`Picked up a rotated client certificate from the kubeconfig`)

// estimatorPickedUpToken and estimatorPickedUpCA are its lines when it
// takes a new token and a changed certificate authority.
var (
	estimatorPickedUpToken = regexp.MustCompile(`Picked up a rotated bearer token from the kubeconfig`)
	estimatorPickedUpCA    = regexp.MustCompile(`Picked up a changed certificate authority from the kubeconfig`)
)

// testEstimator enables the chart's scheduler estimator for member1
// (holdfast's image, the member's kubeconfig from helm values: a client
// certificate, as the chart renders it) and rotates that certificate the
// way a chart user does: helm upgrade with a new certificate, which
// changes the Secret only; the kubelet updates the estimator's directory
// mount (patch 0007; upstream's subPath mount would never change). Then
// the old certificate is revoked (its CA out of member1's
// --client-ca-file) and member1 restarted, and a Node created on member1:
// the estimator's gRPC answer must count it, with no restart of its pod.
func (f *karmadaFlow) testEstimator(t *testing.T, estimatorImage string) {
	ctx := t.Context()
	sc := beginScenario(t, suiteKarmadaNode, "scheduler estimator through the deployed chart: member1's client certificate rotated by helm upgrade (directory mount), the old one revoked, member1 restarted; MaxAvailableReplicas counts a new Node with no restart",
		"setup: `helm upgrade --reuse-values` with components={schedulerEstimator} and schedulerEstimator.memberClusters[0] = member1 (server, CA, a client certificate of CN "+estimatorUser+" bound to cluster-admin on member1); "+
			"member1 trusts client certificates of two CAs of the suite (--client-ca-file); MaxAvailableReplicas asked over gRPC with mutual TLS (the chart's karmada.crt, as karmada-scheduler) at the pod's address; "+
			"member1's Nodes are objects with status.allocatable written by the suite and the not-ready taint lifted (no kubelet on member1)")
	member := f.member.api
	certs := f.member.certs
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "holdfast-e2e-" + estimatorUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: estimatorUser}},
	}
	if _, err := member.Kubernetes().RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		sc.Fatalf("binding %s on member1: %v", estimatorUser, err)
	}
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		sc.Check(os.WriteFile(p, data, 0o600))
		return p
	}
	// The whole list element each time: with --reuse-values, helm
	// replaces a list that --set indexes into, so an element given in
	// part loses the rest.
	caFile := file("member1-ca.crt", member.CAData())
	estimatorValues := func(n int, cert, key []byte) []string {
		prefix := "schedulerEstimator.memberClusters[0]."
		return []string{
			"--set", "components={schedulerEstimator}",
			"--set", prefix + "clusterName=" + memberClusterName,
			"--set", prefix + "replicaCount=1",
			"--set", prefix + "kubeconfig.server=" + member.Endpoint(),
			"--set-file", prefix + "kubeconfig.caCrt=" + caFile,
			"--set-file", prefix + "kubeconfig.crt=" + file(fmt.Sprintf("estimator-%d.crt", n), cert),
			"--set-file", prefix + "kubeconfig.key=" + file(fmt.Sprintf("estimator-%d.key", n), key),
		}
	}
	upgrade := []string{"upgrade", karmadaRelease, f.chart, "--namespace", karmadaNamespace, "--reuse-values", "--wait", "--timeout", "10m", "--post-renderer", f.renderer}
	begin := time.Now()
	out, err := f.n.Helm(ctx, append(slices.Clone(upgrade), estimatorValues(1, certs.First.Cert, certs.First.Key)...)...)
	if err != nil {
		sc.Fatalf("helm upgrade enabling the estimator: %v\n%s", err, out)
	}
	sc.Timing("helm-upgrade-estimator", time.Since(begin))
	pod, err := f.estimatorPod(ctx)
	sc.Check(err)
	if img := pod.Spec.Containers[0].Image; img != estimatorImage {
		sc.Errorf("the estimator runs image %s, want holdfast's %s", img, estimatorImage)
	}
	for _, v := range pod.Spec.Containers[0].VolumeMounts {
		if v.Name == "member-kubeconfig" && v.SubPath != "" {
			sc.Errorf("the member kubeconfig is mounted with subPath %q: the kubelet would never update it", v.SubPath)
		}
	}
	client, err := f.estimatorClient(ctx, pod)
	sc.Check(err)
	ask := func() (int32, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return client.MaxAvailableReplicas(ctx, memberClusterName, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	}
	var base int32
	var last string
	if err := waitFor(ctx, "a first answer of the estimator", func() bool {
		base, err = ask()
		if err != nil {
			last = err.Error()
		}
		return err == nil
	}); err != nil {
		sc.Fatalf("%v (last: %s)", err, last)
	}
	waitAnswer := func(what string, want int32, within time.Duration) time.Duration {
		begin := time.Now()
		var got int32
		var last string
		if err := waitWithin(ctx, within, what, func() bool {
			var err error
			got, err = ask()
			if err != nil {
				last = err.Error()
				return false
			}
			last = fmt.Sprintf("answered %d", got)
			return got == want
		}); err != nil {
			sc.Fatalf("%v: want %d (last: %s)", err, want, last)
		}
		return time.Since(begin)
	}
	sc.Check(estimator.CreateReadyNode(ctx, member.Kubernetes(), "estimator-a", "3"))
	sc.Timing("node-a-to-answer", waitAnswer("the estimator to count Node estimator-a", base+3, time.Minute))
	sc.Notef("before the rotation: MaxAvailableReplicas (cpu 1 per replica) answered %d, then %d with Node estimator-a (3 CPUs)", base, base+3)

	// The rotation as a chart user makes it: helm upgrade with the new
	// certificate; the pod template does not change, only the Secret.
	logMark := len(f.podLog(ctx, pod.Name))
	begin = time.Now()
	out, err = f.n.Helm(ctx, append(slices.Clone(upgrade), estimatorValues(2, certs.Next.Cert, certs.Next.Key)...)...)
	if err != nil {
		sc.Fatalf("helm upgrade with the new certificate: %v\n%s", err, out)
	}
	upgraded := time.Now()
	sc.Timing("helm-upgrade-certificate", upgraded.Sub(begin))
	// The kubelet updates the directory mount on its next sync of the pod
	// (a minute plus jitter). The estimator takes the file on its next
	// request after that: its informers' watches, authenticated when they
	// started, make none until they are opened again.
	volumeFile := "/etc/member-kubeconfig/" + estimatorSecret
	secretName := estimatorSecret
	if err := waitWithin(ctx, estimatorFollowBound, "the kubelet to update the estimator's member-kubeconfig volume", func() bool {
		return f.volumeUpdated(ctx, karmadaNamespace, pod, secretName, secretName, volumeFile)
	}); err != nil {
		sc.Fatalf("%v; %s", err, f.volumeDiagnosis(ctx, karmadaNamespace, pod, secretName, secretName, volumeFile))
	}
	sc.Timing("helm-upgrade-to-volume-updated", time.Since(upgraded))
	sc.Notef("the kubelet updated the directory mount: %s in the container holds the new certificate %.0f s after helm upgrade", volumeFile, time.Since(upgraded).Seconds())

	sc.Check(certs.WithdrawFirst())
	sc.Check(waitRefused(ctx, member.Endpoint(), member.CAData(), certs.First.Cert, certs.First.Key))
	revoked := time.Now()
	sc.Check(member.Restart(ctx))
	restarted := time.Now()
	sc.Timing("member-restart", restarted.Sub(revoked))
	sc.Check(estimator.CreateReadyNode(ctx, member.Kubernetes(), "estimator-b", "2"))
	sc.Timing("node-b-to-answer", waitAnswer("the estimator to count Node estimator-b after the revocation and member1's restart", base+5, 2*time.Minute))
	sc.Timing("restart-to-answer", time.Since(restarted))
	wantLines(sc, "estimator", f.podLog(ctx, pod.Name), logMark, "the upgrade", estimatorPickedUpCert)

	now, err := f.estimatorPod(ctx)
	sc.Check(err)
	sameUnrestarted(sc, "estimator", pod, now)
	n401 := strings.Count(f.podLog(ctx, pod.Name)[logMark:], "Unauthorized")
	sc.Notef("after the revocation and member1's restart: answered %d with Node estimator-b (2 CPUs); pod %s the same, restartCount %d; %d Unauthorized in its log since the upgrade", base+5, pod.Name, restarts(now), n401)
	sc.PassWithTest()
	if t.Failed() {
		return
	}
	f.testEstimatorTokenAndCA(t, pod, waitAnswer, base+5)
}

// testEstimatorTokenAndCA goes on from testEstimator's pod with the two
// other parts of a credential, written to the estimator's Secret as an
// operator does (the chart's values have a client certificate only):
// first a kubeconfig with a ServiceAccount token of member1 and member1's
// old and new CA, then member1 restarted serving a certificate of the new
// CA; then a new token, the old one revoked, member1 restarted. After
// each, a Node created on member1 must be counted, with no restart.
func (f *karmadaFlow) testEstimatorTokenAndCA(t *testing.T, pod *corev1.Pod, waitAnswer func(string, int32, time.Duration) time.Duration, answered int32) {
	ctx := t.Context()
	caRow := beginScenario(t, suiteKarmadaNode, "scheduler estimator through the deployed chart: its Secret rewritten with a token and member1's old and new CA, member1 restarted on the new CA; MaxAvailableReplicas counts a new Node with no restart",
		"setup: testEstimator's pod; Secret "+karmadaNamespace+"/"+estimatorSecret+" rewritten (`kubectl apply` of the chart's kubeconfig with a ServiceAccount token of member1 bound to cluster-admin in place of the client certificate, and member1's old and new CA); "+
			"member1's kube-apiserver then restarted serving a certificate of the new CA (RestartWithNextCA)")
	tokenRow := beginScenario(t, suiteKarmadaNode, "scheduler estimator through the deployed chart: member1's token rotated in its Secret, the old one revoked, member1 restarted; MaxAvailableReplicas counts a new Node with no restart",
		"setup: the Secret rewritten with a token of a second ServiceAccount and member1's new CA only; the first ServiceAccount deleted and recreated until member1 refuses its token; member1's kube-apiserver restarted")
	member := f.member.api
	volumeFile := "/etc/member-kubeconfig/" + estimatorSecret
	// One account per token: revoking the first (delete and recreate)
	// must leave the second valid.
	tokenOf := func(sc *e2ereport.Run, account string) string {
		token, err := member.ServiceAccountToken(ctx, estimatorAccountNamespace, account, 2*time.Hour)
		sc.Check(err)
		sc.Check(member.BindClusterAdmin(ctx, estimatorAccountNamespace, account))
		return token
	}
	// write puts the kubeconfig in the Secret and waits for the kubelet
	// to update the volume; it returns when the container sees it.
	write := func(sc *e2ereport.Run, token string, ca []byte) {
		begin := time.Now()
		sc.Check(f.writeEstimatorKubeconfig(ctx, token, ca))
		if err := waitWithin(ctx, estimatorFollowBound, "the kubelet to update the estimator's member-kubeconfig volume", func() bool {
			return f.volumeUpdated(ctx, karmadaNamespace, pod, estimatorSecret, estimatorSecret, volumeFile)
		}); err != nil {
			sc.Fatalf("%v; %s", err, f.volumeDiagnosis(ctx, karmadaNamespace, pod, estimatorSecret, estimatorSecret, volumeFile))
		}
		sc.Timing("secret-to-volume-updated", time.Since(begin))
	}
	// counted creates a Node of cpus on member1 and wants the estimator to
	// count it with no restart since testEstimator began and the lines
	// since logMark; it returns the estimator's log.
	counted := func(sc *e2ereport.Run, node, cpus, after string, logMark int, lines ...*regexp.Regexp) string {
		sc.Check(estimator.CreateReadyNode(ctx, member.Kubernetes(), node, cpus))
		n, err := strconv.Atoi(cpus)
		sc.Check(err)
		answered += int32(n)
		sc.Timing(node+"-to-answer", waitAnswer("the estimator to count Node "+node+" "+after, answered, 2*time.Minute))
		log := f.podLog(ctx, pod.Name)
		wantLines(sc, "estimator", log, logMark, "the Secret was rewritten", lines...)
		now, err := f.estimatorPod(ctx)
		sc.Check(err)
		sameUnrestarted(sc, "estimator", pod, now)
		return log
	}

	// The CA, overlap: the new one published before member1 presents it.
	logMark := len(f.podLog(ctx, pod.Name))
	first := tokenOf(caRow, "estimator-1")
	oldCA, newCA := member.CAData(), member.NextCAData()
	// The controller-manager's Secret of member1 gets the new CA too, as
	// an operator renewing member1's CA publishes it to every client: the
	// Cluster stays Ready for what follows.
	caRow.Check(f.writeSecret(ctx, "caBundle", slices.Concat(oldCA, newCA)))
	write(caRow, first, slices.Concat(oldCA, newCA))
	begin := time.Now()
	caRow.Check(member.RestartWithNextCA(ctx))
	caRow.Timing("member-restart", time.Since(begin))
	log := counted(caRow, "estimator-c", "4", "after member1's CA switch", logMark, estimatorPickedUpToken, estimatorPickedUpCA)
	caRow.Notef("member1 serves a certificate of the new CA: answered %d with Node estimator-c (4 CPUs); %d x509 errors in its log since the Secret was rewritten", answered, strings.Count(log[logMark:], "x509"))
	caRow.PassWithTest()
	if t.Failed() {
		return
	}

	// The token: a new one, the old one revoked.
	logMark = len(f.podLog(ctx, pod.Name))
	second := tokenOf(tokenRow, "estimator-2")
	write(tokenRow, second, member.CAData())
	tokenRow.Check(member.RevokeServiceAccount(ctx, estimatorAccountNamespace, "estimator-1", first))
	begin = time.Now()
	tokenRow.Check(member.Restart(ctx))
	tokenRow.Timing("member-restart", time.Since(begin))
	log = counted(tokenRow, "estimator-d", "1", "after the revocation and member1's restart", logMark, estimatorPickedUpToken)
	tokenRow.Notef("after the revocation and member1's restart: answered %d with Node estimator-d (1 CPU); %d Unauthorized in its log since the Secret was rewritten", answered, strings.Count(log[logMark:], "Unauthorized"))
	tokenRow.PassWithTest()
}

// writeEstimatorKubeconfig rewrites the estimator's Secret: the chart's
// kubeconfig with token in place of the client certificate and ca as
// its certificate authority.
func (f *karmadaFlow) writeEstimatorKubeconfig(ctx context.Context, token string, ca []byte) error {
	return f.editKubeconfigSecret(ctx, karmadaNamespace, estimatorSecret, estimatorSecret, func(cfg *clientcmdapi.Config) {
		for _, a := range cfg.AuthInfos {
			a.ClientCertificate, a.ClientKey = "", ""
			a.ClientCertificateData, a.ClientKeyData = nil, nil
			a.Token = token
		}
		for _, c := range cfg.Clusters {
			c.CertificateAuthority, c.CertificateAuthorityData = "", ca
		}
	})
}

// editKubeconfigSecret applies edit to the kubeconfig under key of Secret
// ns/name on the node's cluster, as an operator's `kubectl apply` of a
// changed kubeconfig does.
func (f *karmadaFlow) editKubeconfigSecret(ctx context.Context, ns, name, key string, edit func(*clientcmdapi.Config)) error {
	secrets := f.n.Kubernetes().CoreV1().Secrets(ns)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading Secret %s/%s: %w", ns, name, err)
		}
		cfg, err := clientcmd.Load(s.Data[key])
		if err != nil {
			return fmt.Errorf("secret %s/%s key %s: %w", ns, name, key, err)
		}
		edit(cfg)
		if s.Data[key], err = clientcmd.Write(*cfg); err != nil {
			return err
		}
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// wantLines notes the first line of log from mark on matching each of res
// as evidence, and fails sc for each that has none.
func wantLines(sc *e2ereport.Run, what, log string, mark int, since string, res ...*regexp.Regexp) {
	for _, re := range res {
		if line := lineAt(log, mark, re); line != "" {
			sc.Notef("evidence: %s", line)
		} else {
			sc.Errorf("no %q line in the %s's log since %s", re, what, since)
		}
	}
}

// estimatorPod is the one live, Ready estimator pod for member1.
func (f *karmadaFlow) estimatorPod(ctx context.Context) (*corev1.Pod, error) {
	return f.onePod(ctx, karmadaNamespace, estimatorDeployment, "cluster="+memberClusterName)
}

// onePod waits for the one live (no deletion pending), Ready pod of
// Deployment name in ns, among the pods selector selects.
func (f *karmadaFlow) onePod(ctx context.Context, ns, name, selector string) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := waitFor(ctx, "one Ready "+name+" pod", func() bool {
		pods, err := f.n.Kubernetes().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false
		}
		var live []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && strings.HasPrefix(p.Name, name+"-") {
				live = append(live, p)
			}
		}
		if len(live) == 1 && podReady(&live[0]) {
			pod = &live[0]
			return true
		}
		return false
	})
	return pod, err
}

// estimatorClient calls the estimator pod as karmada-scheduler does: mutual
// TLS with the chart's karmada.crt, checked against its server-ca.crt under
// the estimator Service's name.
func (f *karmadaFlow) estimatorClient(ctx context.Context, pod *corev1.Pod) (*estimator.Client, error) {
	s, err := f.n.Kubernetes().CoreV1().Secrets(karmadaNamespace).Get(ctx, karmadaRelease+"-cert", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the chart's certificates: %w", err)
	}
	cert, err := tls.X509KeyPair(s.Data["karmada.crt"], s.Data["karmada.key"])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s-cert: %w", karmadaNamespace, karmadaRelease, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.Data["server-ca.crt"]) {
		return nil, fmt.Errorf("secret %s/%s-cert: no server-ca.crt", karmadaNamespace, karmadaRelease)
	}
	return estimator.NewTLSClient(net.JoinHostPort(pod.Status.PodIP, estimatorGRPCPort), &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12,
		ServerName: estimatorDeployment + "." + karmadaNamespace + ".svc",
	}), nil
}

// podLog is the current log of pod's first container in the release's
// namespace ("" on error).
func (f *karmadaFlow) podLog(ctx context.Context, pod string) string {
	return f.podLogIn(ctx, karmadaNamespace, pod)
}

// podLogIn is podLog in namespace ns.
func (f *karmadaFlow) podLogIn(ctx context.Context, ns, pod string) string {
	b, err := f.n.Kubernetes().CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	return string(b)
}

// lineAt is the first line of log from mark on matching re.
func lineAt(log string, mark int, re *regexp.Regexp) string {
	for line := range strings.Lines(log[mark:]) {
		if re.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// waitRefused polls server until a request with the client certificate
// gets 401.
func waitRefused(ctx context.Context, server string, ca, cert, key []byte) error {
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: server, Timeout: 5 * time.Second,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: cert, KeyData: key}})
	if err != nil {
		return err
	}
	return waitWithin(ctx, 90*time.Second, "member1 to refuse the first client certificate", func() bool {
		_, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err)
	})
}

// volumeUpdated reports whether path in pod's container holds what the
// Secret's key holds now.
func (f *karmadaFlow) volumeUpdated(ctx context.Context, ns string, pod *corev1.Pod, secret, key, path string) bool {
	s, err := f.n.Kubernetes().CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
	if err != nil {
		return false
	}
	pid, _, err := podMainStatus(pod)
	if err != nil {
		return false
	}
	inPod, err := os.ReadFile(fmt.Sprintf("/proc/%d/root%s", pid, path))
	return err == nil && string(inPod) == string(s.Data[key])
}

// volumeDiagnosis says what the container sees of a mounted file against
// what its Secret holds: whether the kubelet updated the volume. It reads
// the file through /proc/<pid>/root of the container's main process.
func (f *karmadaFlow) volumeDiagnosis(ctx context.Context, ns string, pod *corev1.Pod, secret, key, path string) string {
	var parts []string
	s, err := f.n.Kubernetes().CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
	if err != nil {
		parts = append(parts, fmt.Sprintf("Secret %s/%s: %v", ns, secret, err))
	}
	p, err := f.n.Kubernetes().CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return strings.Join(append(parts, fmt.Sprintf("pod %s: %v", pod.Name, err)), "; ")
	}
	pid, _, err := podMainStatus(p)
	if err != nil {
		return strings.Join(append(parts, err.Error()), "; ")
	}
	inPod, err := os.ReadFile(fmt.Sprintf("/proc/%d/root%s", pid, path))
	switch {
	case err != nil:
		parts = append(parts, fmt.Sprintf("reading %s in the container: %v", path, err))
	case s != nil && string(inPod) == string(s.Data[key]):
		parts = append(parts, fmt.Sprintf("%s in the container is the Secret's %s (resourceVersion %s): the kubelet updated the volume", path, key, s.ResourceVersion))
	case s != nil:
		parts = append(parts, fmt.Sprintf("%s in the container (%d bytes) is not the Secret's %s (%d bytes, resourceVersion %s): the kubelet has not updated the volume", path, len(inPod), key, len(s.Data[key]), s.ResourceVersion))
	}
	log := f.podLogIn(ctx, ns, pod.Name)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	parts = append(parts, "last log lines:\n"+strings.Join(lines, "\n"))
	return strings.Join(parts, "; ")
}
