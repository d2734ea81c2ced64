package e2ereport

import "regexp"

// tokenLike matches what must never reach a report: a JWT (three base64url
// parts, the first an encoded JSON object and so starting with "eyJ", as
// every ServiceAccount token does) and the credential after "Bearer".
// Suites redact their own notes too; this is the last line of defence, as
// reports are published as CI artifacts.
var tokenLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}`)

// Redact replaces token-like substrings of s with "<redacted>".
func Redact(s string) string {
	return tokenLike.ReplaceAllString(s, "<redacted>")
}
