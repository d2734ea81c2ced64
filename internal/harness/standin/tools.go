package standin

import (
	"fmt"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// cfsslVersion is the cfssl the hook jobs' stand-in carries. The chart
// names docker.io/cfssl/cfssl:latest, which moves; v1.6.5 is the newest
// release whose command line (gencert -ca -ca-key -config, cfssljson -bare)
// the chart's scripts use unchanged.
const cfsslVersion = "v1.6.5"

// cfsslGoMod is shared by cfssl and cfssljson: the same go.mod resolves the
// same versions, so the second build reuses the first one's compiled
// packages.
const cfsslGoMod = `module holdfast.local/cfssl-build

go 1.18

require github.com/cloudflare/cfssl ` + cfsslVersion + `
`

// cfsslLDFlags is what cfssl's Makefile sets (-s -w and the version).
const cfsslLDFlags = "-s -w -X github.com/cloudflare/cfssl/cli/version.version=" + cfsslVersion

// Cfssl and Cfssljson are cfssl's two commands the chart's certificate
// script pipes together. CGO_ENABLED=0 (toolcache) leaves cfssl's sqlite
// certdb driver a stub; gencert never opens a database.
var (
	Cfssl = toolcache.Tool{
		Name: "cfssl", Version: cfsslVersion, GoMod: cfsslGoMod,
		Package: "github.com/cloudflare/cfssl/cmd/cfssl", LDFlags: cfsslLDFlags,
	}
	Cfssljson = toolcache.Tool{
		Name: "cfssljson", Version: cfsslVersion, GoMod: cfsslGoMod,
		Package: "github.com/cloudflare/cfssl/cmd/cfssljson", LDFlags: cfsslLDFlags,
	}
)

// coreDNSVersion is the CoreDNS kubeadm v1.35.3 deploys
// (cmd/kubeadm/app/constants CoreDNSVersion), so the node's cluster DNS is
// the one a kubeadm cluster of the tool cache's Kubernetes would run.
const coreDNSVersion = "v1.13.1"

// CoreDNSPlugins are the plugins the CoreDNS stand-in is built with: the
// directives of the node's Corefile (internal/harness/node, whose test
// checks it). CoreDNS's own main imports every plugin of its plugin.cfg,
// the cloud providers' SDKs with them; these five build about half of its
// packages (555 of 1071), a cold build about two minutes sooner.
var CoreDNSPlugins = []string{"errors", "health", "ready", "kubernetes", "cache"}

// coreDNSMain is the stand-in's main: coremain, as CoreDNS's own main
// runs it, with CoreDNSPlugins registered instead of every plugin.
func coreDNSMain() string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"github.com/coredns/coredns/coremain\"\n\n")
	for _, p := range CoreDNSPlugins {
		fmt.Fprintf(&b, "\t_ %q\n", "github.com/coredns/coredns/plugin/"+p)
	}
	b.WriteString(")\n\nfunc main() { coremain.Run() }\n")
	return b.String()
}

// CoreDNS is the coredns server with CoreDNSPlugins, built as its Makefile
// builds it (CGO_ENABLED=0, -s -w); GitCommit, which its Makefile sets
// from git, names the release instead.
var CoreDNS = toolcache.Tool{
	Name:    "coredns",
	Version: coreDNSVersion,
	// go 1.24.0 is CoreDNS v1.13.1's own go line.
	GoMod: `module holdfast.local/coredns-build

go 1.24.0

require github.com/coredns/coredns ` + coreDNSVersion + `
`,
	Package: "github.com/coredns/coredns",
	Main:    coreDNSMain(),
	LDFlags: "-s -w -X github.com/coredns/coredns/coremain.GitCommit=" + coreDNSVersion,
}
