package node

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	corev1 "k8s.io/api/core/v1"
)

// containerdDefaultCaps is the effective set containerd's CRI gives a
// root container with no capabilities added or dropped (CHOWN,
// DAC_OVERRIDE, FSETID, FOWNER, MKNOD, NET_RAW, SETGID, SETUID, SETFCAP,
// SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL, AUDIT_WRITE).
const containerdDefaultCaps = "00000000a80425fb"

// procWant is what a container's main process must show in
// /proc/<pid>/status for the securityContext it runs under.
type procWant struct {
	UID        int
	CapEff     string
	NoNewPrivs string
}

// wantFor derives procWant from the chart's container securityContext and
// the image's user: no runAsUser in the chart means the image's, a
// non-root user keeps no effective capability (containerd adds no
// ambient ones), and allowPrivilegeEscalation: false is no_new_privs.
func wantFor(runAsUser *int64, imageUID int, allowPrivilegeEscalation *bool) procWant {
	w := procWant{UID: imageUID, CapEff: "0000000000000000", NoNewPrivs: "0"}
	if runAsUser != nil {
		w.UID = int(*runAsUser)
	}
	if w.UID == 0 {
		w.CapEff = containerdDefaultCaps
	}
	if allowPrivilegeEscalation != nil && !*allowPrivilegeEscalation {
		w.NoNewPrivs = "1"
	}
	return w
}

// checkProcStatus compares a /proc/<pid>/status text with w and returns
// one line per difference.
func checkProcStatus(status string, w procWant) []string {
	fields := map[string]string{}
	for _, l := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	var diffs []string
	uids := strings.Fields(fields["Uid"])
	if len(uids) != 4 {
		diffs = append(diffs, fmt.Sprintf("Uid line %q: want four ids", fields["Uid"]))
	}
	for i, u := range uids {
		if u != strconv.Itoa(w.UID) {
			diffs = append(diffs, fmt.Sprintf("Uid[%d] = %s, want %d", i, u, w.UID))
		}
	}
	if fields["CapEff"] != w.CapEff {
		diffs = append(diffs, fmt.Sprintf("CapEff = %q, want %q", fields["CapEff"], w.CapEff))
	}
	if fields["NoNewPrivs"] != w.NoNewPrivs {
		diffs = append(diffs, fmt.Sprintf("NoNewPrivs = %q, want %q", fields["NoNewPrivs"], w.NoNewPrivs))
	}
	return diffs
}

// containerMainPID finds the main process of a container by its id in the
// cgroup paths of procRoot's processes (the node shares the host's pid
// namespace; kubelet's cgroupfs driver names the container's cgroup after
// its id). The main process is the one whose parent is outside the
// container.
func containerMainPID(procRoot, containerID string) (int, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, err
	}
	in := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), "/"+containerID+"\n") {
			in[pid] = true
		}
	}
	var mains []int
	for pid := range in {
		if ppid, err := parentPID(procRoot, pid); err == nil && !in[ppid] {
			mains = append(mains, pid)
		}
	}
	if len(mains) != 1 {
		return 0, fmt.Errorf("container %s: %d processes in its cgroup, %d with a parent outside it (want 1)", containerID, len(in), len(mains))
	}
	return mains[0], nil
}

func parentPID(procRoot string, pid int) (int, error) {
	f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("process %d: no PPid in its status", pid)
}

// imageUID is the numeric user the linux/amd64 image of an OCI layout
// runs as (its config's User, "uid" or "uid:gid"; empty is root).
func imageUID(dir string) (int, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return 0, fmt.Errorf("image layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return 0, fmt.Errorf("image layout %s: %w", dir, err)
	}
	top, err := idx.IndexManifest()
	if err != nil {
		return 0, fmt.Errorf("image layout %s: %w", dir, err)
	}
	for _, d := range top.Manifests {
		// The layout's index points at the image's own index (both
		// platforms); the node runs amd64.
		inner, err := idx.ImageIndex(d.Digest)
		if err != nil {
			continue
		}
		m, err := inner.IndexManifest()
		if err != nil {
			return 0, fmt.Errorf("image layout %s: %w", dir, err)
		}
		for _, pd := range m.Manifests {
			if pd.Platform == nil || pd.Platform.OS != "linux" || pd.Platform.Architecture != "amd64" {
				continue
			}
			img, err := inner.Image(pd.Digest)
			if err != nil {
				return 0, fmt.Errorf("image layout %s: %w", dir, err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				return 0, fmt.Errorf("image layout %s: %w", dir, err)
			}
			user, _, _ := strings.Cut(cfg.Config.User, ":")
			if user == "" {
				return 0, nil
			}
			uid, err := strconv.Atoi(user)
			if err != nil {
				return 0, fmt.Errorf("image layout %s: user %q is not numeric", dir, cfg.Config.User)
			}
			return uid, nil
		}
	}
	return 0, fmt.Errorf("image layout %s: no linux/amd64 image", dir)
}

// podMainStatus reads /proc/<pid>/status of the main process of pod's
// first container, which containerd runs.
func podMainStatus(pod *corev1.Pod) (pid int, status string, err error) {
	if len(pod.Status.ContainerStatuses) == 0 {
		return 0, "", fmt.Errorf("pod %s has no container status", pod.Name)
	}
	id, ok := strings.CutPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	if !ok {
		return 0, "", fmt.Errorf("pod %s: container id %q is not containerd's", pod.Name, pod.Status.ContainerStatuses[0].ContainerID)
	}
	if pid, err = containerMainPID("/proc", id); err != nil {
		return 0, "", fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, "", fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	return pid, string(b), nil
}
