//go:build e2e

package node

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/standin"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
)

// standInBuild is the one build of the stand-in images (internal/harness/standin)
// a node run shares: the worker's drop-in needs upstream's worker image and
// the Karmada scenario the rest. It starts when TestNode does, before the
// node: on a cold machine it compiles CoreDNS, cfssl and upstream's
// binaries and writes thirteen layouts, about ten minutes of the two cores
// that would otherwise wait behind the node's start and the worker's flows,
// which mostly wait on kubelet and the hubs, and only then begin.
type standInBuild struct {
	done  chan struct{}
	imgs  map[string]standin.Image
	err   error
	took  time.Duration
	logMu sync.Mutex
	lines []string
}

// startStandIns begins the build in the background; wait returns it. In
// `make test` e2e/cmd/e2e-prepare has built the same ahead, and this build
// only checks the stamps.
func startStandIns(ctx context.Context, root string) *standInBuild {
	b := &standInBuild{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		begin := time.Now()
		b.imgs, b.err = standin.Build(ctx, standin.Options{
			Root:  root,
			Trees: pipeline.Config{Out: filepath.Join(root, standin.NodeSuiteTrees)},
			Log:   b,
		})
		b.took = time.Since(begin)
	}()
	return b
}

// Write keeps the build's per-image lines for the scenarios' logs.
func (b *standInBuild) Write(p []byte) (int, error) {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	b.lines = append(b.lines, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// wait blocks until the build is done (or t's context ends) and logs what
// the build did to t; waited is how long t itself waited for it.
func (b *standInBuild) wait(t *testing.T) (imgs map[string]standin.Image, waited time.Duration, err error) {
	begin := time.Now()
	select {
	case <-b.done:
	case <-t.Context().Done():
		return nil, time.Since(begin), t.Context().Err()
	}
	b.logMu.Lock()
	for _, l := range b.lines {
		t.Log(l)
	}
	b.logMu.Unlock()
	t.Logf("stand-in images: built in %s, waited for %s", b.took.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	return b.imgs, time.Since(begin), b.err
}
