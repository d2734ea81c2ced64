// Command auditrender is a helm post-renderer (helm --post-renderer) the
// node suite (e2e/node) installs the Karmada chart with, so that the
// deployed karmada-apiserver writes an audit log: the chart renders a
// fixed command for it with no extra arguments and no extra volumes, and
// a post-renderer is how a user adds what a chart has no value for.
//
// It reads the rendered manifests on stdin and writes them to stdout with
// one change: every Deployment whose first container runs kube-apiserver
// gets the audit flags (policy file, JSON log file), the policy from a
// ConfigMap it adds beside the Deployment (<deployment>-holdfast-audit),
// and an emptyDir for the log, which the suite reads from the host as
// /proc/<pid>/root<LogPath> of the container's main process. Every other
// document passes through byte for byte. The policy is
// internal/harness/controlplane's: Metadata level, every stage but
// RequestReceived.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// LogPath is the audit log inside the karmada-apiserver container; the
// suite has the same constant.
const LogPath = "/var/log/holdfast-audit/audit.log"

const (
	policyDir  = "/etc/holdfast-audit"
	logDir     = "/var/log/holdfast-audit"
	policyKey  = "policy.yaml"
	policyVol  = "holdfast-audit-policy"
	logVol     = "holdfast-audit-log"
	cmSuffix   = "-holdfast-audit"
	apiCommand = "kube-apiserver"
)

// separator is helm's document separator in a rendered release.
var separator = regexp.MustCompile(`(?m)^---[ \t]*\n`)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "auditrender: reading the manifests:", err)
		os.Exit(1)
	}
	out, n, err := render(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "auditrender:", err)
		os.Exit(1)
	}
	if n == 0 {
		fmt.Fprintln(os.Stderr, "auditrender: no Deployment runs kube-apiserver; nothing to audit")
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

// render returns the manifests with every kube-apiserver Deployment
// audited, and how many there were.
func render(in []byte) ([]byte, int, error) {
	var out bytes.Buffer
	n := 0
	for _, doc := range separator.Split(string(in), -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj == nil || obj["kind"] != "Deployment" {
			writeDoc(&out, []byte(doc))
			continue
		}
		cm, ok, err := audit(obj)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			writeDoc(&out, []byte(doc))
			continue
		}
		n++
		for _, o := range []map[string]any{obj, cm} {
			b, err := yaml.Marshal(o)
			if err != nil {
				return nil, 0, err
			}
			writeDoc(&out, b)
		}
	}
	return out.Bytes(), n, nil
}

func writeDoc(out *bytes.Buffer, doc []byte) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return
	}
	out.WriteString("---\n")
	out.Write(doc)
	if !bytes.HasSuffix(doc, []byte("\n")) {
		out.WriteString("\n")
	}
}

// audit adds the flags, mounts and volumes to d when its first container
// runs kube-apiserver, and returns the policy's ConfigMap.
func audit(d map[string]any) (map[string]any, bool, error) {
	meta, _ := d["metadata"].(map[string]any)
	spec, _ := d["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	if len(containers) == 0 {
		return nil, false, nil
	}
	c, _ := containers[0].(map[string]any)
	cmd, _ := c["command"].([]any)
	if len(cmd) == 0 || cmd[0] != apiCommand {
		return nil, false, nil
	}
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if name == "" {
		return nil, false, fmt.Errorf("a kube-apiserver Deployment without a name")
	}
	c["command"] = append(cmd,
		"--audit-policy-file="+policyDir+"/"+policyKey,
		"--audit-log-path="+LogPath,
		"--audit-log-format=json")
	mounts, _ := c["volumeMounts"].([]any)
	c["volumeMounts"] = append(mounts,
		map[string]any{"name": policyVol, "mountPath": policyDir, "readOnly": true},
		map[string]any{"name": logVol, "mountPath": logDir})
	vols, _ := pod["volumes"].([]any)
	pod["volumes"] = append(vols,
		map[string]any{"name": policyVol, "configMap": map[string]any{"name": name + cmSuffix}},
		map[string]any{"name": logVol, "emptyDir": map[string]any{}})
	cmMeta := map[string]any{"name": name + cmSuffix}
	if ns != "" {
		cmMeta["namespace"] = ns
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": cmMeta,
		"data": map[string]any{policyKey: controlplane.AuditPolicy},
	}, true, nil
}
