//go:build e2e

package estimator

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// certUser is the user the estimator's client certificates name (CN), as
// a kubeconfig karmadactl or an operator writes for a member would.
const certUser = "karmada-scheduler-estimator"

// waitFirstRefused polls the member until a request with the first
// certificate gets 401, after withdrawFirst.
func (e *env) waitFirstRefused(ctx context.Context) error {
	kube, err := kubernetes.NewForConfig(&rest.Config{
		Host:            e.member.Endpoint(),
		TLSClientConfig: rest.TLSClientConfig{CAData: e.member.CAData(), CertData: e.certs.First.Cert, KeyData: e.certs.First.Key},
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
