package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// stateDir holds the machine-wide lock and the running node's state. It is
// on /run, a tmpfs: a reboot, which also ends every stale process, clears
// it.
const stateDir = "/run/holdfast-node"

// state is what a run creates on the host, written before it creates it,
// so the next run can clear a run that was killed (clearStale).
type state struct {
	RunDir      string   `json:"runDir"`
	NetNS       string   `json:"netns"`
	HostVeth    string   `json:"hostVeth"`
	CgroupRoot  string   `json:"cgroupRoot"`
	CreatedDirs []string `json:"createdDirs,omitempty"`
}

func statePath() string { return filepath.Join(stateDir, "state.json") }

// lockMachine takes the machine-wide lock: one node at a time, as kubelet
// and containerd assume one of each per machine (the shims' socket folder,
// the kernel's keyrings, the conntrack table).
func lockMachine(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, fmt.Errorf("node lock: %w", err)
	}
	unlock, err := toolcache.Lock(ctx, filepath.Join(stateDir, "lock"))
	if err != nil {
		return nil, fmt.Errorf("node lock %s (another node runs on this machine?): %w", stateDir, err)
	}
	return unlock, nil
}

func writeState(s state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("node state: %w", err)
	}
	return os.Rename(tmp, statePath())
}

func readState() (*state, error) {
	data, err := os.ReadFile(statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("node state: %w", err)
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("node state %s: %w", statePath(), err)
	}
	return &s, nil
}

func updateState(edit func(*state)) error {
	s, err := readState()
	if err != nil || s == nil {
		return err
	}
	edit(s)
	return writeState(*s)
}

// ClearStale takes the machine lock and clears what a killed run left
// (clearStale), then releases it: a test that compares the host before and
// after its node must take "before" after this, or a killed run's leftovers
// would count as the host's.
func ClearStale(ctx context.Context, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	unlock, err := lockMachine(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return clearStale(logf)
}

// clearStale removes what a killed run left, with the lock held: its
// processes (containerd, shims, kubelet, kube-proxy, the holder, found by
// the run marker in their command lines), the processes of its pods (by
// cgroup), its cgroups, namespaces, links and folders. A second containerd
// on the root of a live one would block on its database; this is why a
// start clears first.
func clearStale(logf func(string, ...any)) error {
	killed := killMarked(runMarker, -1)
	if len(killed) > 0 {
		logf("node: killed %d processes of a previous run: %v", len(killed), killed)
	}
	s, err := readState()
	if err != nil || s == nil {
		return err
	}
	logf("node: clearing the previous run %s", s.RunDir)
	if err := clearRun(*s); err != nil {
		return fmt.Errorf("node: clearing the previous run %s: %w", s.RunDir, err)
	}
	return nil
}

// clearRun removes what s records; each step tolerates its object being
// gone already.
func clearRun(s state) error {
	var errs []error
	killCgroupTree(s.CgroupRoot)
	if err := removeCgroupTree(s.CgroupRoot); err != nil {
		errs = append(errs, err)
	}
	// The veth first: deleting the namespace frees its end, and the host
	// end disappears with it a moment later, racing a delete here.
	if s.HostVeth != "" {
		if _, err := os.Stat(filepath.Join("/sys/class/net", s.HostVeth)); err == nil {
			if err := run(context.Background(), "ip", "link", "delete", s.HostVeth); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if s.NetNS != "" {
		if _, err := os.Stat(filepath.Join("/run/netns", s.NetNS)); err == nil {
			if err := run(context.Background(), "ip", "netns", "delete", s.NetNS); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, d := range s.CreatedDirs {
		// Only if empty: something else may have started using it.
		_ = os.Remove(d)
	}
	if s.RunDir != "" && strings.Contains(s.RunDir, runMarker) {
		if err := os.RemoveAll(s.RunDir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(statePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// killMarked SIGKILLs every process whose command line contains marker,
// except pid keep and this process, and returns their pids.
func killMarked(marker string, keep int) []int {
	var killed []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || pid == keep {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), marker) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}

// createCgroupRoot makes kubelet's cgroupRoot in every hierarchy (kubelet
// requires it to exist). A new cpuset cgroup has no CPUs or memory nodes
// until given its parent's. The cpu controller's weight is raised
// (podsCPUWeight).
func createCgroupRoot(root string) error {
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		dir := filepath.Join(h, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: %s: %w", dir, f, err)
			}
		}
		if err := weighCPU(dir); err != nil {
			return err
		}
	}
	return nil
}

// podsCPUWeight is the cpu weight of the node's cgroupRoot, in busy
// processes of the host: every pod of the node shares it. The scheduler
// weighs a cgroup like one process of its weight against the processes
// beside it, so at the default (one process's) a pod tree on a host
// running the other suites (a load of 30 was measured) got about a
// thirtieth of the cores: the Karmada chart's karmada-apiserver then
// failed its liveness probe on TLS handshake timeouts and was killed in
// a loop. A real node gives its pods its own cores; eight processes'
// worth keeps them responsive without taking the host from the rest.
const podsCPUWeight = 8

// weighCPU gives dir, a cgroup of the cpu controller, podsCPUWeight:
// cpu.shares in cgroup v1 (a process weighs 1024), cpu.weight in v2 (a
// process weighs 100). Nothing in another hierarchy.
func weighCPU(dir string) error {
	for file, one := range map[string]int{"cpu.shares": 1024, "cpu.weight": 100} {
		path := filepath.Join(dir, file)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(podsCPUWeight*one)), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: %s: %w", dir, file, err)
		}
	}
	return nil
}

// cgroupDirs are the run's cgroup folders in every hierarchy, deepest
// first, so they can be removed in order.
func cgroupDirs(root string) []string {
	if root == "" || root == "/" {
		return nil
	}
	var dirs []string
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		top := filepath.Join(h, root)
		_ = filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// killCgroupTree SIGKILLs every process in the run's cgroups: the pods'
// containers, which outlive a killed containerd and its shims.
func killCgroupTree(root string) {
	for _, d := range cgroupDirs(root) {
		procs, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(procs)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// removeCgroupTree removes the run's cgroup folders, deepest first; a
// folder whose processes are still exiting is retried for a few seconds.
func removeCgroupTree(root string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var busy []string
		for _, d := range cgroupDirs(root) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				busy = append(busy, d)
			}
		}
		if len(busy) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroups of %s still in use: %s", root, strings.Join(busy, ", "))
		}
		killCgroupTree(root)
		time.Sleep(100 * time.Millisecond)
	}
}
