//go:build e2e

package charts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestWorkerOperatorGrafanaDashboard: off by default (the default manifests
// do not change); on, one ConfigMap carrying the label kube-prometheus-stack's
// dashboard sidecar selects, in the namespace asked for, whose holdfast.json
// is docs/dashboards/holdfast.json.
func TestWorkerOperatorGrafanaDashboard(t *testing.T) {
	f := setup(t)
	for _, values := range []string{workerPrimary, workerHA} {
		for name := range f.render(t, f.operator, workerNamespace, "--values", f.path(values)) {
			if strings.HasPrefix(name, "ConfigMap/") {
				t.Errorf("%s: %s rendered by default", values, name)
			}
		}
	}

	objs := f.render(t, f.operator, workerNamespace, "--values", f.path(workerHA),
		"--values", valuesFile(t, `{"metrics":{"grafanaDashboard":{"enabled":true,"namespace":"monitoring","annotations":{"grafana_folder":"holdfast"}}}}`))
	doc, ok := objs["ConfigMap/kubeslice-operator-grafana-dashboard"]
	if !ok {
		t.Fatalf("no ConfigMap/kubeslice-operator-grafana-dashboard rendered (have %s)", objs.names())
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(doc, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Namespace != "monitoring" || cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "holdfast" {
		t.Errorf("metadata %+v, want namespace monitoring, the label grafana_dashboard=1 and the annotation grafana_folder=holdfast", cm.ObjectMeta)
	}
	want, err := os.ReadFile(filepath.Join(f.root, Dashboard))
	if err != nil {
		t.Fatal(err)
	}
	var got, wantJSON any
	if err := json.Unmarshal([]byte(cm.Data["holdfast.json"]), &got); err != nil {
		t.Fatalf("holdfast.json: %v", err)
	}
	if err := json.Unmarshal(want, &wantJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantJSON) || len(cm.Data) != 1 {
		t.Errorf("data keys %d, holdfast.json equal to %s: %v; want only that key, equal", len(cm.Data), Dashboard, reflect.DeepEqual(got, wantJSON))
	}

	// Without a namespace it goes with the release.
	cm = corev1.ConfigMap{}
	objs = f.render(t, f.operator, workerNamespace, "--values", f.path(workerHA),
		"--values", valuesFile(t, `{"metrics":{"grafanaDashboard":{"enabled":true}}}`))
	if err := yaml.Unmarshal(objs["ConfigMap/kubeslice-operator-grafana-dashboard"], &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Namespace != workerNamespace {
		t.Errorf("namespace %q, want the release's, %s", cm.Namespace, workerNamespace)
	}
}

// TestKarmadaChartGrafanaDashboard: the Karmada chart renders no dashboard
// ConfigMap by default (the default manifests stay upstream's but for the
// images); enabled, one ConfigMap with the sidecar's label, in the namespace
// asked for or the release's, whose holdfast.json is
// docs/dashboards/holdfast.json.
func TestKarmadaChartGrafanaDashboard(t *testing.T) {
	f := setup(t)
	before := f.render(t, f.karmada, karmadaNamespace)
	want, err := os.ReadFile(filepath.Join(f.root, Dashboard))
	if err != nil {
		t.Fatal(err)
	}
	var wantJSON any
	if err := json.Unmarshal(want, &wantJSON); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, values, namespace string }{
		{"own namespace", `{"holdfast":{"grafanaDashboard":{"enabled":true,"namespace":"monitoring","annotations":{"grafana_folder":"holdfast"}}}}`, "monitoring"},
		{"release's namespace", `{"holdfast":{"grafanaDashboard":{"enabled":true,"annotations":{"grafana_folder":"holdfast"}}}}`, karmadaNamespace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := f.render(t, f.karmada, karmadaNamespace, "--values", valuesFile(t, tc.values))
			var added []string
			for name := range objs {
				if _, ok := before[name]; !ok {
					added = append(added, name)
				}
			}
			if len(added) != 1 || !strings.HasPrefix(added[0], "ConfigMap/") {
				t.Fatalf("enabling the dashboard added %q, want one ConfigMap", added)
			}
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict(objs[added[0]], &cm); err != nil {
				t.Fatal(err)
			}
			if cm.Namespace != tc.namespace || cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "holdfast" {
				t.Errorf("metadata %+v, want namespace %s, the label grafana_dashboard=1 and the annotation grafana_folder=holdfast", cm.ObjectMeta, tc.namespace)
			}
			var got any
			if err := json.Unmarshal([]byte(cm.Data["holdfast.json"]), &got); err != nil {
				t.Fatalf("holdfast.json: %v", err)
			}
			if !reflect.DeepEqual(got, wantJSON) || len(cm.Data) != 1 {
				t.Errorf("data keys %d, holdfast.json equal to %s: %v; want only that key, equal", len(cm.Data), Dashboard, reflect.DeepEqual(got, wantJSON))
			}
		})
	}
}
