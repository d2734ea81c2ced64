//go:build e2e

package release

// A release signed with the real cosign, verified the way docs/verifying.md
// tells an operator to: stock cosign commands against the release folder and
// against a registry the release's images were pushed to.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/supplychain/signing"
	"github.com/holdfast-dist/holdfast/internal/supplychain/signing/signingtest"
	"github.com/holdfast-dist/holdfast/internal/supplychain/slsa"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

func TestSignedReleaseVerifiesWithStockCosign(t *testing.T) {
	cosign := signingtest.Cosign(t)
	key, pub, env := signingtest.KeyPair(t, cosign)
	pubKey, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.opts.Unsigned = false
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	// The released twins: copies of the stand-in binaries, so the table's
	// two sides are equal; its numbers are internal/supplychain/vulnreport's
	// tests'.
	pristineBin := t.TempDir()
	for _, sh := range f.opts.Shipped {
		for _, pkg := range sh.Upstream.Build {
			copyBinary(t, filepath.Join(f.opts.Inputs.Bin, sh.Upstream.Name+"-"+sh.Pin.Version, sh.Upstream.BinaryName(pkg)),
				filepath.Join(pristineBin, sh.Upstream.Name+"-"+sh.Pin.Version+"-released", sh.Upstream.BinaryName(pkg)))
		}
	}
	f.opts.Vulnerabilities = ScanVulnerabilities(root, f.opts.Version, f.opts.Shipped, pristineBin)
	f.opts.Signing = &Signing{
		Signer:    &signing.Signer{Cosign: cosign, Key: key, Identity: imagebuild.DefaultRegistry, Env: env},
		PublicKey: pubKey,
		// As if committed at PublishedKeyPath: Assemble refuses a key the
		// repository does not publish.
		PublishedKey: pubKey,
		Build: slsa.Build{Release: f.opts.Version, Repository: "https://github.com/holdfast-dist/holdfast", Commit: commit,
			GoVersion: "go1.26.8", Platforms: []string{"linux/amd64", "linux/arm64"}, Builder: slsa.Builder{ID: slsa.LocalBuilderID}},
	}
	dir, err := Assemble(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		out, stderr, err := signingtest.Run(env, dir, cosign, args...)
		if err != nil {
			return out, &cosignError{err, stderr}
		}
		return out, nil
	}

	// The folder: CHECKSUMS' signature, then the provenance of a binary and
	// a chart. CHECKSUMS must name the provenance, the bundles and the key.
	if _, err := run("verify-blob", "--key", PublicKeyFile, "--insecure-ignore-tlog", "--bundle", ChecksumsFile+signing.BundleSuffix, ChecksumsFile); err != nil {
		t.Fatalf("CHECKSUMS: %v", err)
	}
	sums, _ := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	for _, want := range []string{ProvenanceFile, ProvenanceBundle, PublicKeyFile, vulnreport.FolderName + "/" + vulnreport.SummaryFile, "charts/worker-operator-1.6.4-holdfast.1.tgz" + signing.BundleSuffix} {
		if !strings.Contains(string(sums), "  "+want+"\n") {
			t.Errorf("CHECKSUMS does not name %s", want)
		}
	}
	for _, file := range []string{"bin/karmada-v1.18.2/karmada-controller-manager", "charts/worker-operator-1.6.4-holdfast.1.tgz", "images/workeroperator-v1.6.4/worker-operator.spdx.json"} {
		if _, err := run("verify-blob-attestation", "--key", PublicKeyFile, "--insecure-ignore-tlog", "--type", "slsaprovenance1", "--bundle", ProvenanceBundle, file); err != nil {
			t.Errorf("provenance of %s: %v", file, err)
		}
	}
	if _, err := run("verify-blob", "--key", PublicKeyFile, "--insecure-ignore-tlog", "--bundle", "charts/worker-operator-1.6.4-holdfast.1.tgz"+signing.BundleSuffix, "charts/worker-operator-1.6.4-holdfast.1.tgz"); err != nil {
		t.Errorf("chart signature: %v", err)
	}
	// A changed binary is not what the provenance names.
	tampered := filepath.Join(t.TempDir(), "karmada-controller-manager")
	if err := os.WriteFile(tampered, []byte("not the released binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := run("verify-blob-attestation", "--key", PublicKeyFile, "--insecure-ignore-tlog", "--type", "slsaprovenance1", "--bundle", ProvenanceBundle, tampered); err == nil {
		t.Error("the provenance verified a file it does not name")
	}

	// The images, pushed from the release folder as `make images-push
	// FROM=...` does, verified in that registry.
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/holdfast-dist"
	var checked int
	for _, sh := range f.opts.Shipped {
		pushed, err := imagebuild.Push(context.Background(), imagebuild.PushOptions{
			Out: filepath.Join(dir, "images"), Registry: reg, Name: []name.Option{name.Insecure},
		}, sh.Upstream, sh.Pin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pushed {
			at := p.Ref.Context().Digest(p.Digest.String()).String()
			if _, err := run("verify", "--key", PublicKeyFile, "--insecure-ignore-tlog", at); err != nil {
				t.Errorf("image %s: %v", at, err)
			}
			for _, typ := range []string{"slsaprovenance1", "spdxjson", "cyclonedx", "openvex"} {
				out, err := run("verify-attestation", "--key", PublicKeyFile, "--insecure-ignore-tlog", "--type", typ, at)
				if err != nil {
					t.Errorf("%s attestation of %s: %v", typ, at, err)
					continue
				}
				if typ == "openvex" {
					checkVEXAttestation(t, at, out, filepath.Join(dir, vulnreport.FolderName, vulnreport.VEXFile))
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no image was pushed")
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "RELEASE-NOTES.md"))
	if !strings.Contains(string(notes), "## Vulnerabilities") || !strings.Contains(string(notes), "govulncheck") {
		t.Errorf("notes lack the vulnerability summary:\n%s", notes)
	}
	if !strings.Contains(string(notes), "### Pristine upstream vs holdfast") || !strings.Contains(string(notes), "| karmada-controller-manager | go1.27.3 |") ||
		!strings.Contains(string(notes), "Pristine karmada v1.18.2: upstream's go line implies ") {
		t.Errorf("notes lack the side-by-side table:\n%s", notes)
	}
	if !strings.Contains(string(notes), "cosign verify-attestation --key cosign.pub --insecure-ignore-tlog --type openvex ghcr.io/holdfast-dist/") {
		t.Errorf("notes lack the OpenVEX attestation's command:\n%s", notes)
	}
	if !strings.Contains(string(notes), "cosign verify --key cosign.pub --insecure-ignore-tlog ghcr.io/holdfast-dist/") {
		t.Errorf("notes lack the verification commands:\n%s", notes)
	}
}

// checkVEXAttestation: the attestation cosign verified is the release's
// OpenVEX document under OpenVEX's predicate type, not some other file.
func checkVEXAttestation(t *testing.T, at, out, vexPath string) {
	t.Helper()
	want, err := os.ReadFile(vexPath)
	if err != nil {
		t.Fatal(err)
	}
	var wantDoc any
	if err := json.Unmarshal(want, &wantDoc); err != nil {
		t.Fatalf("%s: %v", vexPath, err)
	}
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var env struct{ Payload string }
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("openvex attestation of %s: cosign's output %q: %v", at, line, err)
		}
		payload, err := base64.StdEncoding.DecodeString(env.Payload)
		if err != nil {
			t.Fatalf("openvex attestation of %s: payload: %v", at, err)
		}
		var st struct {
			PredicateType string          `json:"predicateType"`
			Predicate     json.RawMessage `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &st); err != nil {
			t.Fatalf("openvex attestation of %s: statement: %v", at, err)
		}
		if st.PredicateType != "https://openvex.dev/ns" {
			continue
		}
		var got any
		if err := json.Unmarshal(st.Predicate, &got); err != nil {
			t.Fatalf("openvex attestation of %s: predicate: %v", at, err)
		}
		if !reflect.DeepEqual(got, wantDoc) {
			t.Errorf("openvex attestation of %s: the predicate is not %s", at, vexPath)
		}
		found = true
	}
	if !found {
		t.Errorf("openvex attestation of %s: no statement of predicate type https://openvex.dev/ns in %s", at, out)
	}
}

type cosignError struct {
	err    error
	stderr string
}

func (e *cosignError) Error() string { return e.err.Error() + ": " + e.stderr }
