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

// holdfast glue, laid into the worker-operator tree by holdfast's apply step
// from overlay/workeroperator. It reports the provenance the build stamped
// into pkg/holdfastversion, and answers --version; being an init, it needs
// no patch.

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubeslice/worker-operator/pkg/holdfastversion"
	"github.com/kubeslice/worker-operator/pkg/logger"
)

// init reports the build before anything else logs, and as
// holdfast_build_info on the metrics endpoint, so a running worker says which
// holdfast release and patch series it carries.
func init() {
	if holdfastVersionRequested(os.Args[1:]) {
		holdfastPrintVersion(os.Stdout)
		os.Exit(0)
	}
	logger.NewWrappedLogger().WithName("setup").Info("holdfast build",
		"version", holdfastversion.Version, "seriesHash", holdfastversion.SeriesHash)
	ctrlmetrics.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "holdfast_build_info",
		Help: "Always 1; the labels say which holdfast release and patch series this worker-operator was built from.",
		ConstLabels: prometheus.Labels{
			"version": holdfastversion.Version, "series_hash": holdfastversion.SeriesHash,
		},
	}, func() float64 { return 1 }))
}

// holdfastVersionRequested reports whether the command line asks only for
// the version. worker-operator v1.6.4 has no version flag, and main parses
// its flags with the standard flag package, which would reject one; answering
// here, in an init that runs before main, keeps upstream's main.go unpatched.
// Only a lone --version (or -version, as the flag package spells it too)
// counts, so no upstream flag or argument is ever taken for it.
func holdfastVersionRequested(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version")
}

// holdfastPrintVersion writes the holdfast version first, so that the first
// word is all a script needs, then the patch series it was built from.
func holdfastPrintVersion(w io.Writer) {
	fmt.Fprintf(w, "%s (series %s)\n", holdfastversion.Version, holdfastversion.SeriesHash)
}
