//go:build e2e

package node

import (
	"testing"

	"github.com/holdfast-dist/holdfast/internal/node"
)

func testWorker(t *testing.T, root string, n *node.Node) {}
