/*
Copyright 2026 The holdfast Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package holdfastversion holds the provenance holdfast's build step stamps
// into the worker-operator binary. worker-operator v1.6.4 has no version
// variable of its own, so holdfast's overlay adds this package and pins.txt
// names it (`version pkg/holdfastversion ...`); the build sets it with
//
//	-ldflags "-X github.com/kubeslice/worker-operator/pkg/holdfastversion.Version=v1.6.4-holdfast.N ..."
//
// main reports it (holdfast_version.go). A plain go build leaves "unknown".
package holdfastversion

var (
	// Version is the holdfast release, e.g. v1.6.4-holdfast.1.
	Version = "unknown"
	// SeriesHash identifies the patch series, overlay and carried libraries
	// the binary was built from (the first 12 hex digits of the tree's
	// series-hash in HOLDFAST-PROVENANCE).
	SeriesHash = "unknown"
)
