//go:build e2e

package estimator

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

// certUser is the user the estimator's client certificates name (CN), as
// a kubeconfig karmadactl or an operator writes for a member would.
const certUser = "karmada-scheduler-estimator"

// keyPair is a PEM certificate and its key.
type keyPair struct{ cert, key []byte }

// clientCerts are a certificate row's client CAs and the estimator's two
// certificates: first, from the first CA, in the kubeconfig at start;
// next, from the next CA, the one a rotation writes. The member trusts
// the bundle file (--client-ca-file), both CAs until withdrawFirst.
type clientCerts struct {
	bundle      string
	first, next keyPair
	nextCA      []byte
}

func newClientCerts(dir string) (*clientCerts, error) {
	now := time.Now()
	firstCA, err := testpki.NewAuthority("holdfast-e2e-estimator-client-ca-1", now)
	if err != nil {
		return nil, err
	}
	nextCA, err := testpki.NewAuthority("holdfast-e2e-estimator-client-ca-2", now)
	if err != nil {
		return nil, err
	}
	c := &clientCerts{bundle: filepath.Join(dir, "client-ca.crt"), nextCA: nextCA.CertPEM}
	for _, k := range []struct {
		ca  *testpki.Authority
		out *keyPair
	}{{firstCA, &c.first}, {nextCA, &c.next}} {
		cert, key, err := k.ca.Issue(testpki.Leaf{CommonName: certUser, Usage: x509.ExtKeyUsageClientAuth}, now)
		if err != nil {
			return nil, err
		}
		*k.out = keyPair{cert, key}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return c, writeFileAtomically(c.bundle, append(append([]byte{}, firstCA.CertPEM...), nextCA.CertPEM...))
}

// withdrawFirst leaves only the next CA in the member's --client-ca-file
// (kube-apiserver reloads it on change): the first certificate is refused
// from then on, the way a client certificate is revoked in Kubernetes,
// which has no revocation list.
func (c *clientCerts) withdrawFirst() error {
	return writeFileAtomically(c.bundle, c.nextCA)
}

// writeFileAtomically renames a complete file over path, so that
// kube-apiserver's watcher never reads half a bundle.
func writeFileAtomically(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

// waitFirstRefused polls the member until a request with the first
// certificate gets 401, after withdrawFirst.
func (e *env) waitFirstRefused(ctx context.Context) error {
	kube, err := kubernetes.NewForConfig(&rest.Config{
		Host:            e.member.Endpoint(),
		TLSClientConfig: rest.TLSClientConfig{CAData: e.member.CAData(), CertData: e.certs.first.cert, KeyData: e.certs.first.key},
		Timeout:         5 * time.Second,
	})
	if err != nil {
		return err
	}
	// On the file's change event; within a minute if the event is missed.
	err = wait.PollUntilContextTimeout(ctx, poll, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		return fmt.Errorf("member %s still accepts the first client certificate after its CA left --client-ca-file: %w", memberName, err)
	}
	return nil
}
