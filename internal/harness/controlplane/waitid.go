package controlplane

import (
	"syscall"
	"unsafe"
)

// waitExited blocks until the process pid has exited without reaping it
// (waitid with WNOWAIT, as package os does internally). While the exited
// process stays a zombie its pid, and so its process group id, cannot be
// given to another process: signalling the group then reaches only what the
// process left behind, never an unrelated program that happened to get the
// same number (pid_max is 32768 in many containers, so reuse is real).
func waitExited(pid int) error {
	const pPID = 1     // P_PID from <sys/wait.h>
	var info [128]byte // siginfo_t; only the kernel reads or writes it
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			if errno != 0 {
				return errno
			}
			return nil
		}
	}
}
