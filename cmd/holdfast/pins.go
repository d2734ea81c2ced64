package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// pinEntry is one pin as `pins list --json` prints it: the fields a CI
// matrix job needs to run `holdfast test` and `holdfast build` on it.
type pinEntry struct {
	Upstream string `json:"upstream"`
	Version  string `json:"version"`
	Series   string `json:"series"`
	Default  bool   `json:"default"`
}

// runPins verifies every pin (or one upstream's): the pristine source
// downloads and hashes to the pin, and the series folder parses; or lists
// the pins, for a CI matrix.
func runPins(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "list" {
		return runPinsList(e, args[1:])
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("%w: want `pins verify` or `pins list`", errUsage)
	}
	if args[0] != "verify" {
		return unknownSub("pins", args[0], "verify", "list")
	}
	fs := e.flags("pins verify")
	only := fs.String("upstream", "", "verify only this upstream")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	c := e.config("")
	var failed []error
	checked := 0
	for _, up := range f.Upstreams {
		if *only != "" && !up.Named(*only) {
			continue
		}
		for _, pin := range up.Pins {
			checked++
			in, err := c.LoadInputs(up, pin.Series)
			if err == nil {
				_, err = c.Download.Fetch(ctx, up.Module, pin.Version, pin.Sum)
			}
			if err != nil {
				failed = append(failed, err)
				fmt.Fprintf(e.stdout, "FAIL %s %s\n", up.Name, pin.Version)
				continue
			}
			fmt.Fprintf(e.stdout, "ok   %s %s %s (series %s: %d patches)\n", up.Name, pin.Version, pin.Sum, pin.Series, len(in.Series))
		}
	}
	if checked == 0 {
		_, err := f.Upstream(*only)
		return err
	}
	return errors.Join(failed...)
}

// runPinsList prints every pin, one a line ("karmada v1.18.2 default"), or
// with --json as one line of JSON (a GitHub Actions matrix's include list).
func runPinsList(e *env, args []string) error {
	fs := e.flags("pins list")
	asJSON := fs.Bool("json", false, "print one JSON array of {upstream, version, series, default} on one line")
	only := fs.String("upstream", "", "list only this upstream's pins")
	if err := parse(fs, args); err != nil {
		return err
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	if *only != "" {
		if _, err := f.Upstream(*only); err != nil {
			return err
		}
	}
	list := []pinEntry{}
	for _, up := range f.Upstreams {
		if *only != "" && !up.Named(*only) {
			continue
		}
		for _, p := range up.Pins {
			list = append(list, pinEntry{Upstream: up.Name, Version: p.Version, Series: p.Series, Default: p.Default})
		}
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(list)
	}
	for _, p := range list {
		def := ""
		if p.Default {
			def = " default"
		}
		fmt.Fprintf(e.stdout, "%s %s %s%s\n", p.Upstream, p.Version, p.Series, def)
	}
	return nil
}
