// Package treebin builds binaries of an applied upstream tree that pins.txt
// does not list, once per tree, into <root>/.cache/treebin/.
//
// pins.txt's build line names what holdfast ships: the Karmada binaries
// whose member clients come from BuildClusterConfig. A real Karmada control
// plane needs more (karmada-aggregated-apiserver, karmada-scheduler,
// karmada-webhook) only to run the shipped ones against, so they must not
// join the build line, the release folder or the images. Building them here
// rather than with `holdfast build` keeps every shipped artefact as it is;
// building them with internal/pipeline/build.Build, from the same tree, keeps
// the compile exactly the shipped binaries' (build.Toolchain, static,
// -trimpath, the main module's version, version variables set the same
// way), so what the suites run is what upstream's own build would give
// from that tree.
//
// A cache folder is keyed by the tree's HOLDFAST-PROVENANCE (the pristine
// module's hash, the series, overlay and carried libraries' hash: every
// input of the tree), the packages asked for and the Go version. It is not
// keyed by holdfast's own commit: these binaries are test support, and one
// build per tree instead of one per commit keeps a warm run a cache hit. So
// their version variables carry nothing the key does not cover: the tree's
// version and series hash, and "unknown" for holdfast's commit and build
// date, which also keeps them from passing for a shipped build.
package treebin
