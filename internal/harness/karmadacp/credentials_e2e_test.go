//go:build e2e

package karmadacp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// TestMemberCredentialOnARealControlPlane scrapes real components: the
// patched controller-manager over HTTP (it serves member1's series once it
// built a client for it), and, for the HTTPS branch, the secure port of
// karmada-aggregated-apiserver, an aggregated server with delegated
// authentication and authorization as karmada-search and
// karmada-metrics-adapter are: the admin's credential and the control
// plane's CA must get through, and nothing less must.
func TestMemberCredentialOnARealControlPlane(t *testing.T) {
	ctx := t.Context()
	o, etcd, apiServer := patchedOptions(t)
	cp := StartForTest(t, o)
	member := controlplane.StartForTest(t, controlplane.Options{Name: "member1", Etcd: etcd, KubeAPIServer: apiServer})
	m, err := cp.JoinPush(ctx, "member1", member)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReady(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	got, served, err := cp.MemberCredential(ctx, ControllerManager, "member1")
	if err != nil || !served {
		t.Errorf("controller-manager member1: %+v, served %v, %v; want its token source's series", got, served, err)
	}
	if _, served, err := cp.MemberCredential(ctx, AggregatedAPIServer, "member1"); served || err != nil {
		t.Errorf("the aggregated API server has no metrics URL: served %v, %v; want skipped", served, err)
	}

	name := ClusterGVR.Version + "." + ClusterGVR.Group
	svc, err := cp.API.Dynamic().Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port, _, _ := unstructured.NestedInt64(svc.Object, "spec", "service", "port")
	u := fmt.Sprintf("https://%s/metrics", hostPort(int(port)))
	if _, served, err := scrapeMemberCredential(ctx, u, "member1", cp.API.AdminConfig(), cp.pki.caCert); err != nil || served {
		t.Errorf("%s with the admin's credential: served %v, %v; want scraped, no membercred series", u, served, err)
	}
	anonymous := &rest.Config{Host: cp.API.Endpoint()}
	_, _, err = scrapeMemberCredential(ctx, u, "member1", anonymous, cp.pki.caCert)
	if err == nil || !strings.Contains(err.Error(), "40") {
		t.Errorf("%s without a credential: %v; want refused (401 or 403)", u, err)
	}
	t.Logf("without a credential: %v", err)
	if _, _, err := scrapeMemberCredential(ctx, u, "member1", cp.API.AdminConfig(), cp.API.CAData()); err == nil {
		t.Errorf("%s trusting karmada-apiserver's CA instead of the control plane's: no error; the serving certificate is the control plane CA's", u)
	}
}
