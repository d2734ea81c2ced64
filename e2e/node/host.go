package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// hostSnapshot is what the node must leave as it found it, each part as
// comparable text.
type hostSnapshot map[string]string

// kubeletSysctls are the host-wide sysctls kubelet writes at start.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// counters are iptables-save's packet and byte counts, which traffic
// changes on its own.
var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// linkStats are the parts of `ip -o link` that change with traffic or time.
var linkStats = regexp.MustCompile(`\\.*$`)

func snapshotHost() (hostSnapshot, error) {
	s := hostSnapshot{}
	for _, argv := range [][]string{{"iptables-save"}, {"ip6tables-save"}, {"ip", "netns", "list"}, {"ip", "-o", "link", "show"}} {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
				continue // iptables-save's dated comments
			}
			l = counters.ReplaceAllString(l, "")
			if argv[0] == "ip" && argv[1] == "-o" {
				l = linkStats.ReplaceAllString(l, "")
				// qdisc state and the kernel's altname lines vary with
				// nothing the node did; names and flags are what count.
				if f := strings.Fields(l); len(f) >= 3 {
					l = f[1] + " " + f[2]
				}
			}
			lines = append(lines, l)
		}
		sort.Strings(lines)
		s[strings.Join(argv, " ")] = strings.Join(lines, "\n")
	}
	hierarchies, err := filepath.Glob("/sys/fs/cgroup/*")
	if err != nil {
		return nil, err
	}
	for _, h := range hierarchies {
		entries, err := os.ReadDir(h)
		if err != nil {
			continue
		}
		var dirs []string
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
		s["cgroup folders in "+h] = strings.Join(dirs, " ")
	}
	for _, name := range kubeletSysctls {
		v, err := os.ReadFile("/proc/sys/" + name)
		if err != nil {
			return nil, err
		}
		s["sysctl "+strings.ReplaceAll(name, "/", ".")] = strings.TrimSpace(string(v))
	}
	return s, nil
}

// diff lists every part that differs, with both values.
func (s hostSnapshot) diff(after hostSnapshot) []string {
	var keys []string
	for k := range s {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := s[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if s[k] != after[k] {
			out = append(out, fmt.Sprintf("%s: before %q, after %q", k, s[k], after[k]))
		}
	}
	return out
}
