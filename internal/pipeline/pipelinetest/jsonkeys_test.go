package pipelinetest

import (
	"reflect"
	"slices"
	"testing"
)

type inner struct {
	Fine    string `json:"fineKey"`
	Snake   string `json:"snake_key,omitempty"`
	Skipped string `json:"-"`
}

type embedded struct {
	Promoted string `json:"Promoted"`
}

type outer struct {
	embedded
	Name     string            `json:"name"`
	Untagged string            // named by its Go name
	List     []inner           `json:"list"`
	ByName   map[string]*inner `json:"byName"`
	Self     *outer            `json:"self,omitempty"`
	hidden   string
}

// TestNonCamelCaseFields: every struct reachable from the report's type is
// looked at once, omitempty fields included; tags "-" and unexported
// fields are not keys.
func TestNonCamelCaseFields(t *testing.T) {
	_ = outer{}.hidden
	got := NonCamelCaseFields(reflect.TypeFor[outer]())
	want := []string{`embedded.Promoted: "Promoted"`, `inner.Snake: "snake_key"`, `outer.Untagged: "Untagged"`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := NonCamelCaseFields(reflect.TypeFor[inner]()); len(got) != 1 {
		t.Errorf("inner: %q", got)
	}
}

func TestNonCamelCaseKeys(t *testing.T) {
	got, err := NonCamelCaseKeys([]byte(`{"schema":"x","series_reason":"y","patches":[{"name":"a"},{"upstream_fix":"b","Notes":["c_d"]}],"counts":{"alreadyUpstream":1,"2x":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"counts.2x", "patches[1].Notes", "patches[1].upstream_fix", "series_reason"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := NonCamelCaseKeys([]byte(`{`)); err == nil {
		t.Error("no error for broken JSON")
	}
}
