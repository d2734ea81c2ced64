package membercred

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
)

// TestUpgradeUnauthorized: only an upgrade refused with 401 starts a
// Secret read; any other transport error, and an upgrade refused for
// another reason, say nothing about the token.
func TestUpgradeUnauthorized(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"upgrade refused with 401", &httpstream.UpgradeFailureError{Cause: apierrors.NewUnauthorized("Unauthorized")}, true},
		{"wrapped", fmt.Errorf("exec: %w", &httpstream.UpgradeFailureError{Cause: apierrors.NewUnauthorized("Unauthorized")}), true},
		{"upgrade refused with 403", &httpstream.UpgradeFailureError{Cause: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no"))}, false},
		{"connection reset", errors.New("connection reset by peer"), false},
	} {
		if got := upgradeUnauthorized(tc.err); got != tc.want {
			t.Errorf("%s: upgradeUnauthorized = %v, want %v", tc.name, got, tc.want)
		}
	}
}
