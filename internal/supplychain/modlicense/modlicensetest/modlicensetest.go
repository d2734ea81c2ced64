// Package modlicensetest writes made-up module caches and GOROOTs that
// hold real licence texts, laid out as the go command lays them out, for
// the tests of modlicense and of what reads licences through it
// (internal/pipeline/image's SBOMs) without depending on the machine's module
// cache.
package modlicensetest

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/module"
)

// texts are canonical licence texts (the copyright holder is "Example
// Authors") and the Go project's LICENSE as Go 1.26 ships it.
//
//go:embed texts/*.txt
var texts embed.FS

// Text returns a licence text by name: Apache-2.0, BSD-3-Clause, ISC, MIT
// or Go (the Go project's LICENSE).
func Text(name string) ([]byte, error) {
	data, err := texts.ReadFile("texts/" + name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("no licence text %q in modlicensetest", name)
	}
	return data, nil
}

// Module is a module of a made-up cache: its LICENSE holds the text
// named License (see Text), or nothing when License is empty.
type Module struct {
	Path, Version, License string
}

// WriteGo writes a module cache holding mods under dir/mod and a GOROOT
// whose LICENSE is Go's and whose VERSION is goVersion (go1.25.3) under
// dir/go, and returns their paths.
func WriteGo(dir, goVersion string, mods ...Module) (modCache, goroot string, err error) {
	modCache, goroot = filepath.Join(dir, "mod"), filepath.Join(dir, "go")
	for _, m := range mods {
		escPath, err := module.EscapePath(m.Path)
		if err != nil {
			return "", "", err
		}
		escVersion, err := module.EscapeVersion(m.Version)
		if err != nil {
			return "", "", err
		}
		files := map[string][]byte{"go.mod": []byte("module " + m.Path + "\n")}
		if m.License != "" {
			if files["LICENSE"], err = Text(m.License); err != nil {
				return "", "", err
			}
		}
		if err := writeDir(filepath.Join(modCache, filepath.FromSlash(escPath)+"@"+escVersion), files); err != nil {
			return "", "", err
		}
	}
	license, err := Text("Go")
	if err != nil {
		return "", "", err
	}
	if err := writeDir(goroot, map[string][]byte{"LICENSE": license, "VERSION": []byte(goVersion + "\ntime 2026-12-01T00:00:00Z\n")}); err != nil {
		return "", "", err
	}
	return modCache, goroot, nil
}

func writeDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
