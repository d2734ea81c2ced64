package treetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// offlineExecScript runs a test binary (its arguments) in a network
// namespace of its own with only loopback up. An upstream's unit tests are
// not ours to review line by line, and some dial out (Karmada v1.16's
// operator/pkg/util TestDownloadFile resolves www.example.com through a
// proxy name): no packet of a test may leave the machine, so the binaries
// the gate runs get no route to anything but 127.0.0.1. As root, unshare
// makes the namespace directly; otherwise in a user namespace (-r).
const offlineExecScript = `#!/bin/sh
# holdfast: run a test binary with loopback as its only network.
if [ "$(id -u)" -eq 0 ]; then userns=; else userns=-r; fi
exec unshare $userns --net -- sh -c 'ip link set lo up && exec "$0" "$@"' "$@"
`

// offlineExec writes offlineExecScript into dir and checks that it works
// here, so a machine that cannot isolate the tests says so once, clearly,
// instead of every package failing with an unshare error.
func offlineExec(dir string) (string, error) {
	path := filepath.Join(dir, "holdfast-offline-exec")
	if err := os.WriteFile(path, []byte(offlineExecScript), 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command(path, "true").CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot run the tree's tests without network (unshare --net, and ip from iproute2, are needed; as a non-root user, unprivileged user namespaces): %v: %s", err, out)
	}
	return path, nil
}
