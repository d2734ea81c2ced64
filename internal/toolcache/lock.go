package toolcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a waiting caller retries the lock. A build takes
// seconds to minutes, so a quarter second adds nothing noticeable while
// keeping the wait cancellable through ctx (flock itself cannot be).
const lockPoll = 250 * time.Millisecond

// lockFile takes an exclusive flock on path, waiting until ctx is done. flock
// rather than a lock directory because the kernel drops it when the holder
// dies, so a killed test run never leaves a stale lock behind.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, context.Cause(ctx))
		case <-time.After(lockPoll):
		}
	}
}

// Lock takes the same exclusive flock as Ensure, for other caches under
// .cache that build once for concurrent test binaries
// (internal/pipeline/treebin). The returned function releases it.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	return lockFile(ctx, path)
}
