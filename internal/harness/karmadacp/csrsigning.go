package karmadacp

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

// CSRSigner is kube-controller-manager running its csrsigning controller
// only, on karmada-apiserver (Options.CSRSigning): what signs the
// CertificateSigningRequests of karmada-agent's certRotation controller
// (signer kubernetes.io/kube-apiserver-client) in a real Karmada, where
// karmada-controller-manager's agentcsrapproving controller approves them.
const CSRSigner Component = "kube-controller-manager"

// The client CAs karmada-apiserver trusts when Options.CSRSigning is set
// (--client-ca-file, a bundle of both): signerCA is kube-controller-
// manager's, for the certificates it issues; issuerCA issues the agent's
// first certificate (JoinPullCertificate). Keeping the two apart lets a
// scenario withdraw trust in the first certificate alone
// (WithdrawFirstCertificates): Kubernetes has no revocation list for client
// certificates, and removing the issuing CA from --client-ca-file, which
// kube-apiserver reloads on change, is how one is refused before it
// expires.
const (
	clientCABundleFileName = "client-ca.crt"
	signerCertFileName     = "csr-signer.crt"
	signerKeyFileName      = "csr-signer.key"
	signerCACommonName     = "holdfast-test-csr-signer"
	issuerCACommonName     = "holdfast-test-first-client-certificates"
)

func (p *pki) clientCABundleFile() string { return filepath.Join(p.dir, clientCABundleFileName) }
func (p *pki) signerCertFile() string     { return filepath.Join(p.dir, signerCertFileName) }
func (p *pki) signerKeyFile() string      { return filepath.Join(p.dir, signerKeyFileName) }

// addClientCAs makes the signer and issuer CAs and writes the signer's
// certificate and key and the bundle karmada-apiserver trusts.
func (p *pki) addClientCAs(now time.Time) error {
	signer, err := testpki.NewAuthority(signerCACommonName, now)
	if err != nil {
		return err
	}
	issuer, err := testpki.NewAuthority(issuerCACommonName, now)
	if err != nil {
		return err
	}
	key, err := signer.KeyPEM()
	if err != nil {
		return err
	}
	p.signerCA, p.issuerCA = signer, issuer
	for _, f := range []pemFile{
		{p.signerCertFile(), signer.CertPEM, 0o644},
		{p.signerKeyFile(), key, 0o600},
	} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return err
		}
	}
	return writeAtomically(p.clientCABundleFile(), append(append([]byte{}, signer.CertPEM...), issuer.CertPEM...))
}

// writeAtomically replaces path with data by a rename, so that a reader
// (kube-apiserver's CA file watcher) never sees half a bundle.
func writeAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// newPKI is newPKI in the control plane's folder, with the client CAs of
// CSRSigning when it is set.
func (o Options) newPKI(now time.Time) (*pki, error) {
	p, err := newPKI(filepath.Join(o.Dir, "pki"), now)
	if err != nil || !o.CSRSigning {
		return p, err
	}
	if err := p.addClientCAs(now); err != nil {
		return nil, err
	}
	return p, nil
}

// clientCAFlags are karmada-apiserver's flags for CSRSigning.
func clientCAFlags(p *pki) []string {
	return []string{"--client-ca-file=" + p.clientCABundleFile()}
}

// startCSRSigner starts kube-controller-manager with the csrsigning
// controller alone, signing kubernetes.io/kube-apiserver-client with the
// signer CA karmada-apiserver trusts, and waits for its /healthz.
func (cp *ControlPlane) startCSRSigner(ctx context.Context, kubeconfig string) error {
	certFile, keyFile, err := cp.pki.servingCert("kube-system", string(CSRSigner), time.Now())
	if err != nil {
		return err
	}
	return cp.start(ctx, component{
		name:  CSRSigner,
		ports: 1,
		args: func(ports []int) ([]string, error) {
			return []string{
				"--kubeconfig=" + kubeconfig,
				"--authentication-kubeconfig=" + kubeconfig,
				"--authorization-kubeconfig=" + kubeconfig,
				"--controllers=csrsigning",
				"--cluster-signing-kube-apiserver-client-cert-file=" + cp.pki.signerCertFile(),
				"--cluster-signing-kube-apiserver-client-key-file=" + cp.pki.signerKeyFile(),
				"--leader-elect=false",
				"--bind-address=" + loopback,
				"--secure-port=" + strconv.Itoa(ports[0]),
				"--tls-cert-file=" + certFile,
				"--tls-private-key-file=" + keyFile,
				"--v=" + strconv.Itoa(cp.opts.Verbosity),
			}, nil
		},
		ready:   func(ports []int) check { return cp.httpsCheck(fmt.Sprintf("https://%s/healthz", hostPort(ports[0]))) },
		metrics: -1,
	})
}

// agentCertificateLifetime and agentCertificateAge shape the agent's first
// certificate: valid for 61 minutes (karmada-agent's certRotation asks for
// a new certificate of the old one's lifetime, and the CSR API takes no
// less than 10 minutes), issued 30 minutes ago: half its life is spent, so
// a --cert-rotation-remaining-time-threshold above 0.5 renews it at the
// first check, and the renewed one (61 minutes, from kube-controller-
// manager's 5-minute backdate: 0.92 of it left) is not renewed again below
// 0.92.
const (
	agentCertificateLifetime = 61 * time.Minute
	agentCertificateAge      = 30 * time.Minute
)

// Karmada's agent identity (pkg/controllers/certificate/approver): the
// agentcsrapproving controller approves a CSR whose subject has this
// organization and a common name with this prefix.
const (
	agentGroup      = "system:karmada:agents"
	agentUserPrefix = "system:karmada:agent:"
)

// issueAgentCertificate issues cluster's agent its first client
// certificate from the issuer CA.
func (p *pki) issueAgentCertificate(cluster string, now time.Time) (certPEM, keyPEM []byte, err error) {
	if p.issuerCA == nil {
		return nil, nil, fmt.Errorf("no client CAs: the control plane was started without Options.CSRSigning")
	}
	notBefore := now.Add(-agentCertificateAge)
	return p.issuerCA.Issue(testpki.Leaf{
		CommonName:   agentUserPrefix + cluster,
		Organization: []string{agentGroup},
		Usage:        x509.ExtKeyUsageClientAuth,
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(agentCertificateLifetime),
	}, now)
}
