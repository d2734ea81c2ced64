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

// An IP literal has many spellings of one address; each class below is one
// hub and must normalise to one string, the first entry's.
func TestNormalizeEndpointIPLiteralClasses(t *testing.T) {
	classes := [][]string{
		{"https://[::1]:6443", "https://[0:0:0:0:0:0:0:1]:6443", "https://[0::1]:6443", "https://[::0001]:6443", "[0000:0000:0000:0000:0000:0000:0000:0001]:6443"},
		{"https://[2001:db8::1]", "https://[2001:0DB8:0:0:0:0:0:1]:443", "https://[2001:db8:0::0:1]/"},
		{"https://[2001:db8::a:b]:6443", "https://[2001:DB8::A:B]:6443", "https://[2001:db8:0:0:0:0:a:b]:6443"},
		// An IPv4-mapped IPv6 address is the IPv4 address: Go dials it over
		// IPv4 and verifies it against the certificate's IPv4 SAN.
		{"https://127.0.0.1:6443", "https://[::ffff:127.0.0.1]:6443", "https://[::FFFF:7f00:1]:6443", "https://[0:0:0:0:0:ffff:7f00:0001]:6443"},
		// The zone is an interface name: case-sensitive, kept verbatim.
		{"https://[fe80::1%25eth0]:6443", "https://[FE80:0:0:0:0:0:0:1%25eth0]:6443"},
		{"https://hub-b.example.com:6443", "https://HUB-B.example.COM:6443/"},
	}
	for _, class := range classes {
		want, err := normalizeEndpoint(class[0])
		if err != nil {
			t.Errorf("normalizeEndpoint(%q): %v", class[0], err)
			continue
		}
		for _, e := range class[1:] {
			got, err := normalizeEndpoint(e)
			if err != nil {
				t.Errorf("normalizeEndpoint(%q): %v", e, err)
				continue
			}
			if got != want {
				t.Errorf("%q -> %q, but %q -> %q: want one hub", e, got, class[0], want)
			}
		}
	}
}

func TestNormalizeEndpointIPLiteralsThatStayDistinct(t *testing.T) {
	tests := []struct{ a, b string }{
		{"https://[::1]:6443", "https://[::2]:6443"},
		{"https://[::1]:6443", "https://[::1]:6444"},
		// Loopback over IPv6 and over IPv4 are different sockets.
		{"https://[::1]:6443", "https://127.0.0.1:6443"},
		{"https://[::ffff:10.0.0.1]:6443", "https://10.0.0.2:6443"},
		// IPv4-compatible (deprecated ::a.b.c.d) is not IPv4-mapped.
		{"https://[::127.0.0.1]:6443", "https://127.0.0.1:6443"},
		{"https://[fe80::1%25eth0]:6443", "https://[fe80::1%25eth1]:6443"},
		{"https://[fe80::1%25eth0]:6443", "https://[fe80::1%25ETH0]:6443"},
		{"https://[fe80::1%25eth0]:6443", "https://[fe80::1]:6443"},
		// Not an address to netip (leading zeros): a host name, which Go would
		// resolve rather than parse, so it is not 127.0.0.1.
		{"https://127.000.000.001:6443", "https://127.0.0.1:6443"},
		{"https://localhost:6443", "https://127.0.0.1:6443"},
		{"https://[2001:db8::1]", "http://[2001:db8::1]"},
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
