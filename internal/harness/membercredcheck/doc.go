// Package membercredcheck holds tests of pkg/membercred that use client-go
// packages not every pinned upstream depends on: the SPDY and WebSocket
// upgrade round trippers (exec, attach, port-forward), which pull in
// github.com/moby/spdystream and github.com/gorilla/websocket. pkg/ is
// carried into each upstream tree with its tests, and worker-operator
// v1.6.4's go.sum has no entry for those modules, so these tests live here,
// in holdfast's own module only, and use membercred's exported API.
package membercredcheck
