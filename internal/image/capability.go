package image

// xattrCapability is the PAX record that carries a file's
// security.capability extended attribute in a layer tar; containerd,
// CRI-O and Docker set it when they unpack the layer.
const xattrCapability = "SCHILY.xattr.security.capability"

// capNetBindService is the security.capability value `setcap
// cap_net_bind_service=+ep` writes (struct vfs_cap_data, revision 2,
// little-endian): magic VFS_CAP_REVISION_2 with the effective flag, then
// permitted bit 10 (CAP_NET_BIND_SERVICE) and no inheritable bits, for
// both 32-bit halves.
//
// Why a file capability: Karmada's images run as root and its aggregated
// API servers bind port 443 by default; holdfast's run as 65532, and
// binding below 1024 needs the capability unless the runtime lowers
// net.ipv4.ip_unprivileged_port_start (containerd 2.x does, 1.x and CRI-O
// do not by default). NET_BIND_SERVICE is in every runtime's default set,
// so the chart works unchanged. A pod that drops ALL capabilities must add
// it back, and allowPrivilegeEscalation: false withholds file capabilities
// (no_new_privs): such pods need a secure port above 1023 (docs/images.md).
// ingress-nginx's non-root controller is built the same way. Only the
// binaries that need it get it.
const capNetBindService = "\x01\x00\x00\x02" + // magic_etc: VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	"\x00\x04\x00\x00" + "\x00\x00\x00\x00" + // data[0]: permitted, inheritable
	"\x00\x00\x00\x00" + "\x00\x00\x00\x00" // data[1]: permitted, inheritable
