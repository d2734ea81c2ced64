package hubfollow

import "testing"

// Ports 1 and 65535 are ports; 0 and 65536 are not.
func TestNormalizeEndpointPortRange(t *testing.T) {
	for _, tc := range []struct {
		endpoint, want string
	}{
		{"https://hub-b.example.com:1", "https://hub-b.example.com:1"},
		{"https://hub-b.example.com:65535", "https://hub-b.example.com:65535"},
	} {
		if got, err := normalizeEndpoint(tc.endpoint); err != nil || got != tc.want {
			t.Errorf("normalizeEndpoint(%s) = %q, %v; want %q", tc.endpoint, got, err, tc.want)
		}
	}
	for _, endpoint := range []string{"https://hub-b.example.com:0", "https://hub-b.example.com:65536"} {
		if got, err := normalizeEndpoint(endpoint); err == nil {
			t.Errorf("normalizeEndpoint(%s) = %q, want the port refused", endpoint, got)
		}
	}
}
