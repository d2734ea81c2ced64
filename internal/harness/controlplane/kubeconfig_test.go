package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	c := &Cluster{name: "hub-a", endpoint: "https://127.0.0.1:6443", caData: []byte("CA PEM"), adminTrust: []byte("CA PEM NEXT PEM"), adminToken: "admin-secret", layout: layout(dir)}
	if err := c.writeAdminKubeconfig(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(c.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("admin kubeconfig mode %v: readable by others", fi.Mode().Perm())
	}
	admin, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if admin.Host != c.endpoint || admin.BearerToken != "admin-secret" || string(admin.CAData) != "CA PEM NEXT PEM" {
		t.Errorf("admin kubeconfig: host %q, CA %q, token set %v", admin.Host, admin.CAData, admin.BearerToken != "")
	}

	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("sa-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "worker.kubeconfig")
	if err := c.WriteTokenKubeconfig(path, tokenFile); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.CAData) != "CA PEM" {
		t.Errorf("token kubeconfig trusts %q, want only the serving CA", cfg.CAData)
	}
	if cfg.BearerTokenFile != tokenFile {
		t.Errorf("token kubeconfig: tokenFile %q, want %q", cfg.BearerTokenFile, tokenFile)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sa-token") || strings.Contains(string(raw), "admin-secret") {
		t.Errorf("token kubeconfig embeds a token:\n%s", raw)
	}
}
