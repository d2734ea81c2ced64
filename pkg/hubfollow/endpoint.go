package hubfollow

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// normalizeEndpoint returns the canonical form of a hub endpoint so that two
// spellings of the same API server compare equal and two different servers
// never do. The canonical form is scheme://host:port[/path] with:
//
//   - scheme and host name lower-cased (both are case-insensitive);
//   - an IP literal in netip's canonical form, so every spelling of one
//     address is one hub ([0:0:0:0:0:0:0:1] is [::1]); see canonicalHost;
//   - a missing scheme read as https, as client-go's DefaultServerURL does for
//     a host whose client has a CA configured (every hub connection has one);
//   - the default port (443 for https, 80 for http) made explicit;
//   - the path kept, since a path prefix selects a different API server behind
//     a proxy, but a trailing slash dropped ("" and "/" are the same root).
//
// Userinfo, query and fragment are refused rather than normalised: a hub
// endpoint carries none, and userinfo would put a credential in logs.
func normalizeEndpoint(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("endpoint is empty")
	}
	u, err := parseEndpoint(raw)
	if err != nil {
		return "", errors.New("endpoint is not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	var defaultPort string
	switch scheme {
	case "https":
		defaultPort = "443"
	case "http":
		defaultPort = "80"
	default:
		return "", fmt.Errorf("endpoint scheme %q is not http or https", scheme)
	}
	if u.User != nil {
		return "", errors.New("endpoint carries userinfo")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", errors.New("endpoint carries a query or fragment")
	}
	host := canonicalHost(u.Hostname())
	if host == "" {
		return "", errors.New("endpoint has no host")
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("endpoint has an empty port")
	}
	port := defaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("endpoint port is out of range")
		}
		port = strconv.Itoa(n) // "0443" and "443" are one port
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	return scheme + "://" + net.JoinHostPort(host, port) + path, nil
}

// canonicalHost returns one spelling per host. An IP literal is what
// netip.Addr.String gives: RFC 5952 for IPv6 (lower-case hex, zeros
// compressed), and an IPv4-mapped address (::ffff:127.0.0.1) as the plain IPv4
// address, because Go dials a mapped address over IPv4 and checks it against
// the certificate's IPv4 SAN, so both spellings reach the same server. An
// IPv6 zone is an interface name, which is case-sensitive, so it is kept
// verbatim (and a zoned address differs from the unzoned one). Anything netip
// does not parse is a host name (including IPv4 with leading zeros, which Go
// resolves rather than parses) and is only lower-cased: no DNS is consulted,
// so two names for one server remain two hubs.
func canonicalHost(host string) string {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().String()
	}
	return strings.ToLower(host)
}

// redactEndpoint renders an endpoint for a log line or error. Configured
// endpoints with userinfo are refused, but a claim read from a hub can carry
// anything, so its password must not reach a log.
func redactEndpoint(raw string) string {
	u, err := parseEndpoint(raw)
	if err != nil {
		return "<unparseable endpoint>"
	}
	if u.User != nil {
		// url.Redacted keeps the user name; drop all of it.
		u.User = url.User("REDACTED")
	}
	return u.String()
}

// parseEndpoint parses a hub endpoint the way client-go's DefaultServerURL
// reads rest.Config.Host: without a scheme it is a host[:port] served over
// https (every hub connection has a CA configured).
func parseEndpoint(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	return url.Parse(raw)
}
