package node

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// TestEveryRunStaysInsideThePrefix: whatever k a run draws, its addresses
// are in 198.18.0.0/15 and its interface names fit IFNAMSIZ.
func TestEveryRunStaysInsideThePrefix(t *testing.T) {
	_, prefix, _ := net.ParseCIDR(addressPrefix)
	for k := 0; k < 256; k++ {
		n := network{k: k, id: "abcdef"}
		if err := n.insidePrefix(); err != nil {
			t.Fatal(err)
		}
		for _, ip := range []net.IP{n.hostIP(), n.nodeIP(), n.kubernetesServiceIP()} {
			if !prefix.Contains(ip) {
				t.Errorf("k=%d: %s outside %s", k, ip, addressPrefix)
			}
		}
		_, pods, _ := net.ParseCIDR(n.podCIDR())
		_, services, _ := net.ParseCIDR(n.serviceCIDR())
		if pods.Contains(services.IP) || services.Contains(pods.IP) || !services.Contains(n.kubernetesServiceIP()) {
			t.Errorf("k=%d: pods %s and services %s overlap, or the kubernetes Service IP is outside", k, pods, services)
		}
	}
}

func TestContainerdConfigKeepsTheKnownTraps(t *testing.T) {
	c := containerdConfig(runLayout("/tmp/holdfast-node-run-x"), pauseImage)
	for _, want := range []string{
		"restrict_oom_score_adj = true",
		`sandbox_image = "holdfast.local/pause:holdfast"`,
		"SystemdCgroup = false",
		`Root = "/tmp/holdfast-node-run-x/runc"`,
		`address = "/tmp/holdfast-node-run-x/containerd/containerd.sock"`,
		`conf_dir = "/tmp/holdfast-node-run-x/cni/net.d"`,
	} {
		if !strings.Contains(c, want) {
			t.Errorf("containerd config lacks %q", want)
		}
	}
}

func TestKubeletConfig(t *testing.T) {
	n := network{k: 7, id: "abcdef"}
	c := kubeletConfig(n, runLayout("/r"), "/holdfast-node-abcdef", kubeletPorts{api: 1, healthz: 2})
	for _, want := range []string{"failCgroupV1: false", "cgroupRoot: /holdfast-node-abcdef", "address: 198.18.7.2", "containerRuntimeEndpoint: unix:///r/containerd/containerd.sock", "podLogsDir: /r/pod-logs", "cgroupDriver: cgroupfs", "clusterDNS: [198.19.7.138]"} {
		if !strings.Contains(c, want) {
			t.Errorf("kubelet config lacks %q:\n%s", want, c)
		}
	}
}

// TestCNIConfigAddsNoChains: ipMasq false and no portmap keep the plugins
// from writing iptables chains.
func TestCNIConfigAddsNoChains(t *testing.T) {
	raw, err := cniConfig(network{k: 7, id: "abcdef"}, runLayout("/r"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Plugins) != 1 || conf.Plugins[0]["type"] != "bridge" || conf.Plugins[0]["ipMasq"] != false || conf.Plugins[0]["bridge"] != "hfbabcdef" {
		t.Errorf("plugins = %v, want one bridge hfbabcdef with ipMasq false", conf.Plugins)
	}
	if !strings.Contains(string(raw), `"subnet": "198.19.7.0/25"`) || !strings.Contains(string(raw), `"dataDir": "/r/cni/ipam"`) {
		t.Errorf("host-local range or dataDir wrong:\n%s", raw)
	}
}

func TestNamedIndexKeepsOnlyImages(t *testing.T) {
	index := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[
{"mediaType":"application/vnd.oci.image.index.v1+json","size":1,"digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","annotations":{"io.containerd.image.name":"ghcr.io/holdfast-dist/worker-operator:v1.6.4-holdfast.3"}},
{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":1,"digest":"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","artifactType":"application/spdx+json"}]}`
	out, img, err := namedIndex([]byte(index))
	if err != nil {
		t.Fatal(err)
	}
	if img.Name != "ghcr.io/holdfast-dist/worker-operator:v1.6.4-holdfast.3" || !strings.HasSuffix(img.Digest, "aaaa") {
		t.Errorf("image = %+v", img)
	}
	if strings.Contains(string(out), "bbbb") || !strings.Contains(string(out), `"schemaVersion":2`) {
		t.Errorf("filtered index still holds the SBOM or lost its fields: %s", out)
	}
	if got, want := img.ByDigest(), "ghcr.io/holdfast-dist/worker-operator@sha256:"+strings.Repeat("a", 64); got != want {
		t.Errorf("ByDigest = %s, want %s", got, want)
	}
	if got := (Image{Name: "localhost:5000/x", Digest: "sha256:c"}).ByDigest(); got != "localhost:5000/x@sha256:c" {
		t.Errorf("ByDigest of an untagged name with a registry port = %s", got)
	}
	if _, _, err := namedIndex([]byte(`{"manifests":[]}`)); err == nil {
		t.Error("an index naming no image was accepted")
	}
}
