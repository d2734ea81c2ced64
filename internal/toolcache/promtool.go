package toolcache

// promtoolVersion is the Prometheus module whose promtool tests the alert
// rules holdfast ships (docs/alerts, the charts' PrometheusRules) and parses
// the Grafana dashboard's queries. Module v0.316.0 is Prometheus 3.16.0
// (Prometheus tags its Go module v0.3MM.P for release 3.MM.P).
const promtoolVersion = "v0.316.0"

// promtoolRelease is the release promtoolVersion is, as `promtool
// --version` prints it.
const promtoolRelease = "3.16.0"

// Promtool is Prometheus's rule checker and rule unit-test runner. The
// prometheus module cannot be a dependency of holdfast's own module: it
// requires client-go v0.37, above the v0.32-v0.35 range pkg/ must compile
// against (make compat), so its PromQL parser is reached through this
// binary. Its releases set common/version's variables (.promu.yml); a
// wrapper-module build would print an empty version without them.
var Promtool = Tool{
	Name:    "promtool",
	Version: promtoolVersion,
	// go 1.26.7 is prometheus v0.316.0's own go line.
	GoMod: `module holdfast.local/promtool-build

go 1.26.7

require github.com/prometheus/prometheus ` + promtoolVersion + `
`,
	Package: "github.com/prometheus/prometheus/cmd/promtool",
	// remove_all_sd (plugins/plugin_*.go at v0.316.0: each provider builds
	// under `!remove_all_sd || enable_<name>_sd`) leaves out the service
	// discoveries promtool registers for `check config`; `test rules` and
	// `check rules` never use them. It drops 242 of the 1126 non-standard
	// packages (the AWS, Azure, GCE, Hetzner, ... providers); the
	// Kubernetes one stays, promtool imports it directly.
	Tags: []string{"remove_all_sd"},
	LDFlags: "-s -w" +
		" -X github.com/prometheus/common/version.Version=" + promtoolRelease +
		" -X github.com/prometheus/common/version.Branch=HEAD",
}
