// Package charts packages the Helm charts holdfast ships and pushes them to
// OCI registries: the last step of pins -> patched trees -> binaries ->
// images and charts.
//
// One chart per upstream, for its default pin (see Charts):
//
//   - karmada: upstream's charts/karmada, taken from the patched Karmada tree,
//     where the series' chart patch (0003-chart-holdfast-images-and-guard-flags)
//     points the patched components at holdfast's images and exposes the
//     own-credential guard's flags as values. Staging does what upstream's
//     hack/package-helm-chart.sh does for a release (set the image-version
//     anchors) and lays holdfast's stand-in for the `common` library chart
//     (charts/karmada-common): the chart depends on bitnami's, and the
//     release machines reach no chart repository.
//   - worker-operator: holdfast's charts/worker-operator, plus the CRDs and
//     RBAC rules of the patched worker-operator tree's config/, so a rebase
//     carries upstream's new resources and permissions into the chart.
//
// Versions come from pins.txt (ChartVersion, AppVersion). helm is run as a
// command (Helm), the same CLI users run, which internal/toolcache builds from its
// module; holdfast's own module needs no Helm dependency. Archives are
// reproducible: helm stamps every entry with the time of packaging, and
// Build rewrites them with one fixed time (SOURCE_DATE_EPOCH or holdfast's
// commit time), so the same inputs give the same bytes and the same OCI
// layer digest.
package charts
