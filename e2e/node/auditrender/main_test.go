package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const manifests = `---
# Source: karmada/templates/karmada-apiserver.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rel-apiserver
  namespace: karmada-system
spec:
  template:
    spec:
      containers:
        - name: rel-apiserver
          command:
            - kube-apiserver
            - --secure-port=5443
          volumeMounts:
            - name: apiserver-cert
              mountPath: /etc/kubernetes/pki
      volumes:
        - name: apiserver-cert
          secret:
            secretName: rel-cert
---
# Source: karmada/templates/kube-controller-manager.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rel-kube-controller-manager
spec:
  template:
    spec:
      containers:
        - name: kcm
          command:
            - kube-controller-manager
---
apiVersion: v1
kind: Service
metadata:
  name: rel-apiserver
`

func TestRenderAuditsOnlyKubeAPIServer(t *testing.T) {
	out, n, err := render([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("audited %d Deployments, want 1", n)
	}
	docs := separator.Split(string(out), -1)[1:]
	if len(docs) != 4 {
		t.Fatalf("%d documents out, want 4 (three in, one ConfigMap added):\n%s", len(docs), out)
	}
	// Documents that do not run kube-apiserver pass through unchanged.
	for _, want := range []string{"# Source: karmada/templates/kube-controller-manager.yaml\n", "apiVersion: v1\nkind: Service\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lost %q:\n%s", want, out)
		}
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Command      []string
						VolumeMounts []struct{ Name, MountPath string }
					}
					Volumes []struct {
						Name      string
						ConfigMap *struct{ Name string } `json:"configMap"`
						EmptyDir  *struct{}              `json:"emptyDir"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(docs[0]), &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantCmd := []string{"kube-apiserver", "--secure-port=5443", "--audit-policy-file=/etc/holdfast-audit/policy.yaml", "--audit-log-path=" + LogPath, "--audit-log-format=json"}
	if strings.Join(c.Command, " ") != strings.Join(wantCmd, " ") {
		t.Errorf("command = %q, want %q", c.Command, wantCmd)
	}
	if len(c.VolumeMounts) != 3 || c.VolumeMounts[1].MountPath != policyDir || c.VolumeMounts[2].MountPath != logDir {
		t.Errorf("volumeMounts = %+v", c.VolumeMounts)
	}
	v := d.Spec.Template.Spec.Volumes
	if len(v) != 3 || v[1].ConfigMap == nil || v[1].ConfigMap.Name != "rel-apiserver-holdfast-audit" || v[2].EmptyDir == nil {
		t.Errorf("volumes = %+v", v)
	}
	var cm struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Data     map[string]string
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Name != "rel-apiserver-holdfast-audit" || cm.Metadata.Namespace != "karmada-system" || !strings.Contains(cm.Data[policyKey], "level: Metadata") {
		t.Errorf("policy ConfigMap = %+v", cm)
	}
}

func TestRenderWithoutKubeAPIServer(t *testing.T) {
	_, n, err := render([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err != nil || n != 0 {
		t.Fatalf("render = %d, %v; want 0 Deployments audited", n, err)
	}
}
