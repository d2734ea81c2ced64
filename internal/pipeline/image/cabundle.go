package image

import (
	"bytes"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// caBundleModule is the Go module the CA certificates come from. The
// bundle is Mozilla NSS's root store as the Go team publishes it: a module
// pinned in go.mod and checked against the checksum database, so the
// certificates are the same on every machine and change only with a
// reviewed go.mod bump, never with the build host's ca-certificates
// package. Bump it as Go's own govulncheck advice says: when a new version
// is published.
const caBundleModule = "golang.org/x/crypto/x509roots/fallback"

// caBundleVersion is the version go.mod requires (a test keeps them equal).
// It is spelled out rather than read from the running binary's build
// information, which test binaries lack, so that the root filesystem, and
// so the image digest, does not depend on how holdfast itself was built.
// v0.0.0-20260213171211 is the newest version whose go.mod asks for no
// newer Go than holdfast's (go 1.25.0); later ones require go 1.26.
const caBundleVersion = "v0.0.0-20260213171211-a408498e5541"

// CABundle returns the PEM bundle written to
// /etc/ssl/certs/ca-certificates.crt, the first file crypto/x509 and
// OpenSSL look for on Linux.
//
// NSS roots that carry a distrust-after date are left out: a PEM file
// cannot carry that constraint, so keeping them would trust everything
// those CAs issue from now on. What they may still vouch for was issued
// before the date, and every such date in the pinned bundle (the latest,
// 2025-04-15) is more than the 398-day maximum lifetime of a TLS server
// certificate ago, so leaving them out rejects nothing still valid.
func CABundle() ([]byte, error) {
	var buf bytes.Buffer
	kept, left := 0, 0
	var certs bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			left++
			continue
		}
		if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
		kept++
	}
	if kept == 0 {
		return nil, fmt.Errorf("%s holds no unconstrained root certificate", caBundleModule)
	}
	fmt.Fprintf(&buf, "# Mozilla NSS root certificates from %s %s:\n", caBundleModule, caBundleVersion)
	fmt.Fprintf(&buf, "# %d roots; %d with a distrust-after date left out. Written by holdfast.\n", kept, left)
	buf.Write(certs.Bytes())
	return buf.Bytes(), nil
}
