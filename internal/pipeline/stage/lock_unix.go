//go:build unix

package stage

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on path, waiting for it. The file is
// left in place afterwards: removing a lock file races with a process that
// has just opened it.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
