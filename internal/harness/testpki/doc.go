// Package testpki makes the per-run certificate authorities of the
// control planes the suites start (internal/harness/controlplane's
// kube-apiservers, internal/harness/karmadacp's aggregated API servers, webhook
// and front proxy): ECDSA P-256 keys, fast to generate and accepted everywhere
// Kubernetes takes a certificate, and certificates valid for a day from a
// minute ago, so that a leaked test folder is soon worthless and a client
// checking within the second it was made never sees one "not yet valid".
//
// It exists because client-go's util/cert makes self-signed certificates
// only (NewSelfSignedCACert, GenerateSelfSignedCertKey), not a leaf signed
// by a CA, which every serving and front-proxy certificate here is.
package testpki
