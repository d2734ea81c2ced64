package controlplane_test

import (
	"context"
	"log"
	"os"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// A member cluster whose credential is rotated and revoked, then restarted
// so that every watch on it has to reconnect. (Compiled, not run: it needs
// the tools built; controlplane_e2e_test.go runs the same steps.)
func ExampleStart() {
	ctx := context.Background()
	root, err := toolcache.Root()
	if err != nil {
		log.Fatal(err)
	}
	etcd, apiServer, err := controlplane.EnsureBinaries(ctx, root)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "member1-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	member, err := controlplane.Start(ctx, controlplane.Options{Name: "member1", Dir: dir, Etcd: etcd, KubeAPIServer: apiServer})
	if err != nil {
		log.Fatal(err) // names the component and quotes its log
	}
	defer member.Stop()

	old, err := member.ServiceAccountToken(ctx, "karmada-cluster", "member1", 0)
	if err != nil {
		log.Fatal(err)
	}
	// ... hand old to the controller under test, then rotate:
	if err := member.RevokeServiceAccount(ctx, "karmada-cluster", "member1", old); err != nil {
		log.Fatal(err)
	}
	if err := member.Restart(ctx); err != nil {
		log.Fatal(err)
	}
}
