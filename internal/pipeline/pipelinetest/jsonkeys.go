package pipelinetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// camelCase is the form of every key of the pipeline's JSON reports, as
// treetest's report first had it (holdfastVersion): a lower-case letter,
// then letters and digits.
var camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// NonCamelCaseFields lists the JSON keys of t's fields that are not
// camelCase, as "Type.Field: key", sorted; t may be a struct or anything
// holding one. It follows fields into the structs they hold (through
// pointers, slices, arrays and map values) and embedded structs, so a key
// that is left out when empty (omitempty) is checked too, unlike in a
// decoded report. An exported field without a json tag is named by its Go
// name, which is not camelCase: every field of a report states its key.
func NonCamelCaseFields(t reflect.Type) []string {
	var bad []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case tag == "-":
				continue
			case f.Anonymous && name == "":
				// encoding/json promotes an embedded struct's fields.
				walk(f.Type)
				continue
			case !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			if !camelCase.MatchString(name) {
				bad = append(bad, fmt.Sprintf("%s.%s: %q", t.Name(), f.Name, name))
			}
			walk(f.Type)
		}
	}
	walk(t)
	sort.Strings(bad)
	return bad
}

// NonCamelCaseKeys lists the keys of the JSON document data, at any depth,
// that are not camelCase, each with its path ("patches[0].upstream_fix"),
// sorted. Every object key counts, so it suits documents whose objects are
// all records; a map keyed by data (a test name) would be flagged.
func NonCamelCaseKeys(data []byte) ([]string, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var bad []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if !camelCase.MatchString(k) {
					bad = append(bad, p)
				}
				walk(p, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", doc)
	sort.Strings(bad)
	return bad, nil
}
