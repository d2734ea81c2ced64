//go:build e2e

package standin

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// fixture is the packaged charts, helm and the pristine trees, made once
// per test binary in private folders (pipeline rebuilds trees another
// holdfast executable made).
type fixture struct {
	root, work string
	helm       charts.Helm
	karmada    charts.Package
	trees      pipeline.Config
	pins       *pins.File
}

var (
	fixtureOnce sync.Once
	shared      *fixture
	sharedErr   error
)

func setup(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { shared, sharedErr = newFixture() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		os.RemoveAll(shared.work)
	}
	os.Exit(code)
}

func newFixture() (*fixture, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root, err := toolcache.Root()
	if err != nil {
		return nil, err
	}
	helmPath, err := toolcache.Ensure(ctx, root, toolcache.Helm)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "holdfast-standin-test-")
	if err != nil {
		return nil, err
	}
	f := &fixture{root: root, work: work, trees: pipeline.Config{Root: root, Out: filepath.Join(work, "trees")}}
	f.helm = charts.Helm{Path: helmPath, Env: append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(work, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(work, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(work, "helm", "data"),
		"KUBECONFIG="+filepath.Join(work, "no-kubeconfig"),
	)}
	if f.pins, err = pins.Load(filepath.Join(root, pins.FileName)); err != nil {
		return nil, err
	}
	pkgs, err := charts.Build(ctx, charts.Options{
		Pins: f.pins, Trees: f.trees, Out: filepath.Join(work, "charts"), Helm: f.helm,
		ModTime: time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC),
	})
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		if p.Chart.Name == "karmada" {
			f.karmada = p
		}
	}
	return f, nil
}

// container is one container of a rendered workload.
type container struct {
	where string // "Deployment/rel-apiserver init wait"
	corev1.Container
}

// render runs helm template and returns every container of every
// Deployment, StatefulSet and Job, hooks included (helm template renders
// them), in document order.
func (f *fixture) render(t *testing.T, chart string, args ...string) []container {
	t.Helper()
	out, err := f.helm.Run(t.Context(), append([]string{"template", "rel", chart, "--namespace", "karmada-system"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var cs []container
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("rendered document: %v\n%s", err, doc)
		}
		var name string
		var spec *corev1.PodSpec
		switch head.Kind {
		case "Deployment":
			var o appsv1.Deployment
			mustUnmarshal(t, doc, &o)
			name, spec = o.Name, &o.Spec.Template.Spec
		case "StatefulSet":
			var o appsv1.StatefulSet
			mustUnmarshal(t, doc, &o)
			name, spec = o.Name, &o.Spec.Template.Spec
		case "Job":
			var o batchv1.Job
			mustUnmarshal(t, doc, &o)
			name, spec = o.Name, &o.Spec.Template.Spec
		case "DaemonSet", "CronJob", "Pod", "ReplicaSet":
			t.Fatalf("the chart renders a %s: this test reads only Deployments, StatefulSets and Jobs", head.Kind)
		default:
			continue
		}
		for _, c := range spec.InitContainers {
			cs = append(cs, container{head.Kind + "/" + name + " init " + c.Name, c})
		}
		for _, c := range spec.Containers {
			cs = append(cs, container{head.Kind + "/" + name + " " + c.Name, c})
		}
	}
	return cs
}

func mustUnmarshal(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := yaml.Unmarshal(doc, into); err != nil {
		t.Fatal(err)
	}
}

// TestKarmadaChartImages is the list of every image holdfast's Karmada
// chart deploys in host install mode with default values. A rebase that
// adds, moves or retags one fails here: give it a stand-in (Catalogue)
// and update the list.
func TestKarmadaChartImages(t *testing.T) {
	f := setup(t)
	holdfastCM := "ghcr.io/holdfast-dist/karmada-controller-manager:" + f.karmada.AppVersion
	want := []string{
		"Deployment/rel-aggregated-apiserver init wait = " + RefKubectl,
		"Deployment/rel-aggregated-apiserver rel-aggregated-apiserver = " + RefAggregatedAPIServer,
		"Deployment/rel-apiserver init wait = " + RefCfssl,
		"Deployment/rel-apiserver rel-apiserver = " + RefKubeAPIServer,
		"Deployment/rel-controller-manager init wait = " + RefKubectl,
		"Deployment/rel-controller-manager rel-controller-manager = " + holdfastCM,
		"Deployment/rel-scheduler init wait = " + RefKubectl,
		"Deployment/rel-scheduler rel-scheduler = " + RefScheduler,
		"Deployment/rel-webhook init wait = " + RefKubectl,
		"Deployment/rel-webhook rel-webhook = " + RefWebhook,
		"Deployment/rel-kube-controller-manager init wait = " + RefKubectl,
		"Deployment/rel-kube-controller-manager kube-controller-manager = " + RefKubeControllerManager,
		"StatefulSet/etcd etcd = " + RefEtcd,
		"Job/rel-static-resource post-install = " + RefKubectl,
		"Job/rel-post-delete post-delete = " + RefKubectl,
		"Job/rel-pre-install init init = " + RefCfssl,
		"Job/rel-pre-install pre-install = " + RefKubectl,
		"Job/rel-pre-upgrade pre-upgrade = " + RefKubectl,
	}
	var got []string
	for _, c := range f.render(t, f.karmada.Path) {
		got = append(got, c.where+" = "+c.Image)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("the chart's images changed:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	for _, line := range got {
		img := line[strings.Index(line, " = ")+3:]
		if img != holdfastCM && !slices.Contains(Refs(), img) {
			t.Errorf("%s: no stand-in in Catalogue", line)
		}
	}
}

// TestPristineNamesAreUpstreams renders the pristine tree's own chart with
// karmada-search and karmada-metrics-adapter on: its images are the
// pristine stand-ins' names. And upstream's worker-operator Makefile names
// the repository of its image.
func TestPristineNamesAreUpstreams(t *testing.T) {
	f := setup(t)
	up, err := f.pins.Upstream("karmada")
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := up.Pin("")
	tree, err := f.trees.Build(t.Context(), up, pin, provenance.Pristine)
	if err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(f.work, "pristine-chart", "karmada")
	if _, err := fscopy.Tree(chart, filepath.Join(tree.Dir, "charts", "karmada"), fscopy.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fscopy.Tree(filepath.Join(chart, "charts", "common"), filepath.Join(f.root, charts.KarmadaCommonDir), fscopy.Options{}); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(chart, "values.yaml")
	data, _ := os.ReadFile(values)
	// What upstream's hack/package-helm-chart.sh does for a release.
	anchor := regexp.MustCompile(`(?m)^(karmadaImageVersion: &karmadaImageVersion )\S+$`)
	if len(anchor.FindAll(data, -1)) != 1 {
		t.Fatalf("%s: no karmadaImageVersion anchor", values)
	}
	if err := os.WriteFile(values, anchor.ReplaceAll(data, []byte("${1}"+pin.Version)), 0o644); err != nil {
		t.Fatal(err)
	}
	// By workload: upstream names the metrics adapter's container
	// rel-aggregated-apiserver.
	images := map[string]string{}
	for _, c := range f.render(t, chart, "--set", "components={search,metricsAdapter}") {
		if !strings.Contains(c.where, " init ") {
			images[strings.Fields(c.where)[0]] = c.Image
		}
	}
	for where, want := range map[string]string{
		"Deployment/rel-controller-manager": RefPristineControllerManager,
		"Deployment/rel-search":             RefPristineSearch,
		"Deployment/rel-metrics-adapter":    RefPristineMetricsAdapter,
	} {
		if images[where] != want {
			t.Errorf("pristine chart: %s runs %q, want %q", where, images[where], want)
		}
	}

	wo, err := f.pins.Upstream("workeroperator")
	if err != nil {
		t.Fatal(err)
	}
	wpin, _ := wo.Pin("")
	wtree, err := f.trees.Build(t.Context(), wo, wpin, provenance.Pristine)
	if err != nil {
		t.Fatal(err)
	}
	makefile, _ := os.ReadFile(filepath.Join(wtree.Dir, "Makefile"))
	repo, _, _ := strings.Cut(RefPristineWorkerOperator, ":")
	if !bytes.Contains(makefile, []byte("IMG ?= "+repo+":$(VERSION)")) || !strings.HasSuffix(RefPristineWorkerOperator, ":"+wpin.Version) {
		t.Errorf("%s is not upstream's Makefile IMG repository at the pin's version %s", RefPristineWorkerOperator, wpin.Version)
	}
}

var (
	buildOnce sync.Once
	builtImgs map[string]Image
	builtErr  error
	buildTook time.Duration
)

// built runs the real Build once per test binary.
func built(t *testing.T) map[string]Image {
	t.Helper()
	f := setup(t)
	buildOnce.Do(func() {
		start := time.Now()
		builtImgs, builtErr = Build(context.Background(), Options{Root: f.root, Trees: f.trees, Log: testLog{t}})
		buildTook = time.Since(start)
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	t.Logf("stand-in images ready in %s", buildTook.Round(time.Millisecond))
	return builtImgs
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestStandInsRunTheChartsCommands builds the real stand-ins and checks,
// for every container of the default render, that its command resolves in
// its image as the runtime would resolve it, and that every command its
// script runs is one the stand-in provides (contracts) and resolves.
func TestStandInsRunTheChartsCommands(t *testing.T) {
	f := setup(t)
	imgs := built(t)
	holdfastCM := "ghcr.io/holdfast-dist/karmada-controller-manager:" + f.karmada.AppVersion
	fss := map[string]imageFS{}
	for _, c := range f.render(t, f.karmada.Path) {
		if c.Image == holdfastCM {
			continue // holdfast's own image: internal/pipeline/image's tests
		}
		img, ok := imgs[c.Image]
		if !ok {
			t.Errorf("%s: no stand-in for %s", c.where, c.Image)
			continue
		}
		fs, ok := fss[c.Image]
		if !ok {
			fs = readLayout(t, img.Layout)
			fss[c.Image] = fs
		}
		if fs.name != c.Image {
			t.Errorf("%s: layout names %q, want %q", c.where, fs.name, c.Image)
		}
		argv := append(append([]string(nil), c.Command...), c.Args...)
		if len(c.Command) == 0 {
			argv = append(append([]string(nil), fs.config.Entrypoint...), c.Args...)
		}
		if len(argv) == 0 {
			t.Errorf("%s: nothing to run", c.where)
			continue
		}
		if _, ok := fs.lookPath(argv[0]); !ok {
			t.Errorf("%s: %q does not resolve in %s (PATH %s)", c.where, argv[0], c.Image, fs.env("PATH"))
		}
		if len(argv) == 3 && argv[1] == "-c" {
			for _, cmd := range scriptCommands(argv[2]) {
				if slices.Contains(shellBuiltins, cmd) {
					continue
				}
				if !slices.Contains(contracts[c.Image].commands, cmd) {
					t.Errorf("%s: its script runs %q, which the %s stand-in's contract does not list", c.where, cmd, c.Image)
				}
				if _, ok := fs.lookPath(cmd); !ok {
					t.Errorf("%s: its script's %q does not resolve in %s", c.where, cmd, c.Image)
				}
			}
		}
	}
	for ref, c := range contracts {
		img, ok := imgs[ref]
		if !ok {
			t.Errorf("Build made no %s", ref)
			continue
		}
		fs := readLayout(t, img.Layout)
		if fs.config.User != c.user || !slices.Equal(fs.config.Entrypoint, c.entrypoint) {
			t.Errorf("%s: user %q entrypoint %q, want %q %q", ref, fs.config.User, fs.config.Entrypoint, c.user, c.entrypoint)
		}
		for _, cmd := range c.commands {
			if _, ok := fs.lookPath(cmd); !ok {
				t.Errorf("%s: %q does not resolve", ref, cmd)
			}
		}
	}
}

func TestBuildTwiceWritesNothing(t *testing.T) {
	f := setup(t)
	first := built(t)
	start := time.Now()
	again, err := Build(t.Context(), Options{Root: f.root, Trees: f.trees})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm Build took %s", time.Since(start).Round(time.Millisecond))
	for ref, img := range again {
		if img.Built || img.Digest != first[ref].Digest {
			t.Errorf("%s: warm Build rebuilt it (built=%v, digest %s, was %s)", ref, img.Built, img.Digest, first[ref].Digest)
		}
	}
}

// configMapData returns the data of the rendered ConfigMap name.
func (f *fixture) configMapData(t *testing.T, chart, name string) map[string]string {
	t.Helper()
	out, err := f.helm.Run(t.Context(), "template", "rel", chart, "--namespace", "karmada-system")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var cm corev1.ConfigMap
		if yaml.Unmarshal(doc, &cm) == nil && cm.Kind == "ConfigMap" && cm.Name == name {
			return cm.Data
		}
	}
	t.Fatalf("the chart renders no ConfigMap %s", name)
	return nil
}

// unpack lays the image's layers out under dir as a runtime would: in
// order, folders, files and symbolic links with their modes.
func unpack(t *testing.T, layoutDir, dir string) {
	t.Helper()
	root, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	rim, _ := root.IndexManifest()
	idx, err := root.ImageIndex(rim.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(h.Name, "/")))
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(p, os.FileMode(h.Mode).Perm()|os.ModeDir)
				if err == nil {
					err = os.Chmod(p, os.FileMode(h.Mode).Perm()|fileModeBits(h.Mode))
				}
			case tar.TypeSymlink:
				os.Remove(p)
				err = os.Symlink(h.Linkname, p)
			case tar.TypeReg:
				var w *os.File
				if w, err = os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, os.FileMode(h.Mode).Perm()); err == nil {
					_, err = io.Copy(w, tr)
					w.Close()
				}
			default:
				t.Fatalf("layer entry %s: type %c", h.Name, h.Typeflag)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rc.Close()
	}
}

func fileModeBits(mode int64) os.FileMode {
	var m os.FileMode
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

// TestCfsslStandInRunsThePreInstallScript runs the pre-install job's
// certificate script, as the chart renders it, in the cfssl stand-in's
// root filesystem (chroot, root as the image's user), with the job's
// ConfigMap mounted at /opt/mount as a pod would have it: every
// placeholder is filled and the certificates chain as Karmada needs.
func TestCfsslStandInRunsThePreInstallScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root; the node suite runs the job for real")
	}
	f := setup(t)
	imgs := built(t)
	var script, workdir string
	for _, c := range f.render(t, f.karmada.Path) {
		if c.where == "Job/rel-pre-install init init" {
			script, workdir = c.Command[2], c.WorkingDir
		}
	}
	if script == "" {
		t.Fatal("the chart renders no pre-install init container")
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	unpack(t, imgs[RefCfssl].Layout, rootfs)
	for name, content := range f.configMapData(t, f.karmada.Path, "rel-config") {
		writeFile(t, filepath.Join(rootfs, "opt", "mount", name), content)
	}
	if err := os.MkdirAll(filepath.Join(rootfs, "opt", "configs"), 0o755); err != nil { // the emptyDir
		t.Fatal(err)
	}
	fs := readLayout(t, imgs[RefCfssl].Layout)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = fs.config.Env
	cmd.Dir = workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pre-install script failed in the cfssl stand-in: %v\n%s", err, out)
	}
	configs := filepath.Join(rootfs, "opt", "configs")
	for _, name := range []string{"cert.yaml", "webhook-cert.yaml", "kubeconfig.yaml"} {
		data, err := os.ReadFile(filepath.Join(configs, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("{{")) {
			t.Errorf("%s still holds a placeholder:\n%s", name, data)
		}
	}
	var secret corev1.Secret
	data, _ := os.ReadFile(filepath.Join(configs, "cert.yaml"))
	mustUnmarshal(t, data, &secret)
	pemOf := func(key string) *pem.Block {
		b, _ := pem.Decode(secret.Data[key])
		if b == nil {
			t.Fatalf("cert.yaml %s is not PEM: %q", key, secret.Data[key])
		}
		return b
	}
	ca, err := x509.ParseCertificate(pemOf("server-ca.crt").Bytes)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pemOf("karmada.crt").Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{
		DNSName: "etcd-client.karmada-system.svc.cluster.local", Roots: pool,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}); err != nil {
		t.Errorf("karmada.crt does not verify against server-ca.crt for etcd's service name: %v", err)
	}
	if _, err := tls.X509KeyPair(secret.Data["karmada.crt"], secret.Data["karmada.key"]); err != nil {
		t.Errorf("karmada.crt and karmada.key: %v", err)
	}
	if leaf.Subject.CommonName != "system:admin" || !slices.Contains(leaf.Subject.Organization, "system:masters") {
		t.Errorf("karmada.crt subject %s, want system:admin in system:masters", leaf.Subject)
	}
}

// TestKubectlStandInRunsTheWaitScript runs the `wait` init container's
// script, as rendered, in the kubectl stand-in's root filesystem as its
// user (1001, group 0, HOME=/ as a runtime sets it without a passwd
// entry) against a real kube-apiserver: it keeps waiting while the
// karmada-version ConfigMap is missing and finishes once it names the
// chart's version.
func TestKubectlStandInRunsTheWaitScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root; the node suite runs the pods for real")
	}
	f := setup(t)
	imgs := built(t)
	var script string
	for _, c := range f.render(t, f.karmada.Path) {
		if c.where == "Deployment/rel-scheduler init wait" {
			script = c.Command[2]
		}
	}
	if script == "" {
		t.Fatal("the chart renders no wait init container on rel-scheduler")
	}
	cluster := controlplane.StartForTest(t, controlplane.Options{Name: "karmada-host"})
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	unpack(t, imgs[RefKubectl].Layout, rootfs)
	kubeconfig, err := os.ReadFile(cluster.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	// A Secret volume's default mode: readable by the image's user.
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "kubeconfig"), kubeconfig, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := readLayout(t, imgs[RefKubectl].Layout)
	uid, _ := strconv.Atoi(fs.config.User)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append(append([]string(nil), fs.config.Env...), "HOME=/")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uint32(uid), Gid: 0}}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Waiting: two rounds of "wait for ..." with the ConfigMap absent.
	const waiting = "wait for karmada-static-resource-job finished"
	for strings.Count(out.String(), waiting) < 2 {
		select {
		case err := <-done:
			t.Fatalf("the wait script ended (%v) before the ConfigMap existed:\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	kube := cluster.Kubernetes()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-version", Namespace: "karmada-system"},
		Data:       map[string]string{"karmadaVersion": f.karmada.Pin.Version},
	}
	if _, err := kube.CoreV1().ConfigMaps("karmada-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the wait script failed once the ConfigMap existed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "karmada-static-resource-job successfully completed") {
		t.Errorf("the wait script ended without its success line:\n%s", out.String())
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestCfsslStandInRunsTheEtcdWait runs karmada-apiserver's `wait` init
// container script, as rendered, in the cfssl stand-in: it retries while
// etcd's Service address refuses connections and ends once it accepts
// them (the Service environment a pod gets names the address).
func TestCfsslStandInRunsTheEtcdWait(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root; the node suite runs the pods for real")
	}
	f := setup(t)
	imgs := built(t)
	var script string
	for _, c := range f.render(t, f.karmada.Path) {
		if c.where == "Deployment/rel-apiserver init wait" {
			script = c.Command[2]
		}
	}
	if script == "" {
		t.Fatal("the chart renders no wait init container on rel-apiserver")
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	unpack(t, imgs[RefCfssl].Layout, rootfs)
	// A free port: nothing listens on it until the test does.
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().(*net.TCPAddr)
	probe.Close()

	fs := readLayout(t, imgs[RefCfssl].Layout)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append(append([]string(nil), fs.config.Env...),
		"ETCD_CLIENT_SERVICE_HOST=127.0.0.1", fmt.Sprintf("ETCD_CLIENT_SERVICE_PORT=%d", addr.Port))
	cmd.Dir = fs.config.WorkingDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	failed := "failed to connect to 127.0.0.1:" + strconv.Itoa(addr.Port)
	for strings.Count(out.String(), failed) < 2 {
		select {
		case err := <-done:
			t.Fatalf("the wait script ended (%v) before etcd's address accepted connections:\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := <-done; err != nil {
		t.Fatalf("the wait script failed once etcd's address accepted connections: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "successfully connect to 127.0.0.1:"+strconv.Itoa(addr.Port)) {
		t.Errorf("no success line:\n%s", out.String())
	}
}
