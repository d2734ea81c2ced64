package node

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStartBuildsToolsWithTheCallersContext: StartTimeout bounds the node's
// own start, not the tool builds before it (a cold kube-apiserver build with
// the node's binaries outlasts 5 minutes on 2 cores), so the tools are built
// with the caller's context, which here has no deadline at all.
func TestStartBuildsToolsWithTheCallersContext(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("Start checks the runtime first: %v", err)
	}
	stop := errors.New("stop before the node starts")
	defer func(old func(context.Context, string) (binaries, error)) { ensureTools = old }(ensureTools)
	var deadline time.Time
	var hasDeadline bool
	ensureTools = func(ctx context.Context, root string) (binaries, error) {
		deadline, hasDeadline = ctx.Deadline()
		return binaries{}, stop
	}
	if _, err := Start(context.Background(), Options{Root: t.TempDir(), StartTimeout: time.Minute}); !errors.Is(err, stop) {
		t.Fatalf("Start: %v, want the stub's error", err)
	}
	if hasDeadline {
		t.Errorf("the tools were built with a deadline (%s) the caller did not set: StartTimeout cut the build short", deadline.Format(time.RFC3339))
	}
}
