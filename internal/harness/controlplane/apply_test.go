package controlplane

import (
	"strings"
	"testing"
)

func TestDecodeObjects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []string // kind/name
		wantErr string
	}{
		{
			name: "documents, empty ones skipped",
			in:   "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
			want: []string{"Namespace/a", "ConfigMap/b"},
		},
		{
			name: "List flattened",
			in:   `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}]}`,
			want: []string{"Secret/s"},
		},
		{
			name:    "missing kind names the document",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nmetadata:\n  name: nokind\n",
			wantErr: `document 2 (name "nokind"): apiVersion and kind are required`,
		},
		{
			name:    "bad YAML names the document",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\nkind: [\n",
			wantErr: "document 2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := decodeObjects([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("objects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFailedChecks(t *testing.T) {
	body := "[+]ping ok\n[-]poststarthook/rbac/bootstrap-roles failed: not finished\n[+]etcd ok\nreadyz check failed\n"
	if got, want := failedChecks(body), "[-]poststarthook/rbac/bootstrap-roles failed: not finished"; got != want {
		t.Errorf("failedChecks = %q, want %q", got, want)
	}
	if got := failedChecks("forbidden\n"); got != "forbidden" {
		t.Errorf("failedChecks of a plain body = %q", got)
	}
}
