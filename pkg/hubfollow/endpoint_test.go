package hubfollow

import (
	"strings"
	"testing"
)

func TestNormalizeEndpointEquivalentURLsMatch(t *testing.T) {
	tests := []struct{ a, b string }{
		{"https://hub-b.example.com:6443", "https://hub-b.example.com:6443"},
		{"https://hub-b.example.com:6443", "HTTPS://Hub-B.Example.COM:6443"},
		{"https://hub-b.example.com:6443", "https://hub-b.example.com:6443/"},
		{"https://hub-b.example.com", "https://hub-b.example.com:443"},
		{"https://hub-b.example.com/", "https://hub-b.example.com:443"},
		{"http://hub-b.example.com", "http://hub-b.example.com:80/"},
		{"hub-b.example.com:6443", "https://hub-b.example.com:6443"},
		{"hub-b.example.com", "https://hub-b.example.com:443"},
		{"https://hub-b.example.com:06443", "https://hub-b.example.com:6443"},
		{"https://[2001:DB8::1]:6443", "https://[2001:db8::1]:6443/"},
		{"https://[2001:db8::1]", "https://[2001:db8::1]:443"},
		{"https://proxy.example.com/k8s/clusters/hub-b/", "https://proxy.example.com:443/k8s/clusters/hub-b"},
	}
	for _, tt := range tests {
		a, errA := normalizeEndpoint(tt.a)
		b, errB := normalizeEndpoint(tt.b)
		if errA != nil || errB != nil {
			t.Errorf("normalizeEndpoint(%q, %q): errors %v, %v", tt.a, tt.b, errA, errB)
			continue
		}
		if a != b {
			t.Errorf("%q -> %q and %q -> %q: want equal", tt.a, a, tt.b, b)
		}
	}
}

func TestNormalizeEndpointDifferentURLsNeverMatch(t *testing.T) {
	tests := []struct{ a, b string }{
		{"https://hub-a.example.com:6443", "https://hub-b.example.com:6443"},
		{"https://hub-b.example.com:6443", "https://hub-b.example.com:6444"},
		{"https://hub-b.example.com:6443", "https://hub-b.example.com"},
		{"https://hub-b.example.com:443", "http://hub-b.example.com:443"},
		{"https://hub-b.example.com", "http://hub-b.example.com"},
		{"https://proxy.example.com/k8s/clusters/hub-a", "https://proxy.example.com/k8s/clusters/hub-b"},
		{"https://proxy.example.com/k8s", "https://proxy.example.com/"},
		{"https://proxy.example.com/K8S", "https://proxy.example.com/k8s"}, // paths are case-sensitive
		{"https://hub-b.example.com.", "https://hub-b.example.com"},
		{"https://10.0.0.1:6443", "https://10.0.0.2:6443"},
	}
	for _, tt := range tests {
		a, errA := normalizeEndpoint(tt.a)
		b, errB := normalizeEndpoint(tt.b)
		if errA != nil || errB != nil {
			t.Errorf("normalizeEndpoint(%q, %q): errors %v, %v", tt.a, tt.b, errA, errB)
			continue
		}
		if a == b {
			t.Errorf("%q and %q both normalise to %q: want different", tt.a, tt.b, a)
		}
	}
}

func TestNormalizeEndpointRefuses(t *testing.T) {
	tests := []struct {
		name, endpoint string
	}{
		{"empty", ""},
		{"userinfo", "https://admin:s3cret@hub-b.example.com:6443"},
		{"user only", "https://admin@hub-b.example.com"},
		{"userinfo without scheme", "admin:s3cret@hub-b.example.com:6443"},
		{"query", "https://hub-b.example.com:6443?x=1"},
		{"empty query", "https://hub-b.example.com:6443/?"},
		{"fragment", "https://hub-b.example.com:6443#x"},
		{"other scheme", "ftp://hub-b.example.com"},
		{"unix scheme", "unix:///var/run/hub.sock"},
		{"no host", "https://"},
		{"no host with port", "https://:6443"},
		{"empty port", "https://hub-b.example.com:"},
		{"port out of range", "https://hub-b.example.com:70000"},
		{"port zero", "https://hub-b.example.com:0"},
		{"not a port", "https://hub-b.example.com:https"},
		{"control character", "https://hub-b.example.com/\x7f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalizeEndpoint(tt.endpoint)
			if err == nil {
				t.Fatalf("normalizeEndpoint(%q) = %q, want an error", tt.endpoint, got)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q echoes the password", err)
			}
		})
	}
}

func TestRedactEndpointHidesUserinfo(t *testing.T) {
	for _, raw := range []string{
		"https://admin:s3cret@hub-b.example.com:6443",
		"admin:s3cret@hub-b.example.com:6443",
		"https://s3cret@hub-b.example.com",
	} {
		got := redactEndpoint(raw)
		if strings.Contains(got, "s3cret") || strings.Contains(got, "admin") {
			t.Errorf("redactEndpoint(%q) = %q, leaks userinfo", raw, got)
		}
		if !strings.Contains(got, "hub-b.example.com") {
			t.Errorf("redactEndpoint(%q) = %q, lost the host", raw, got)
		}
	}
}
