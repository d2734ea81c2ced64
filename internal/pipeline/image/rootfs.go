package image

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
)

// defaultPath is the PATH distroless and alpine set.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// passwd and group hold distroless's accounts: root, nobody and nonroot,
// with no login shell (there is none in the image). Every image has them
// whatever its Spec.User, so a pod that sets runAsUser: 65532 on an image
// that runs as root still finds its account and home, as on distroless.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// zoneinfoDir is where alpine's tzdata and distroless put the time zone
// database, and the first place Go's time package looks.
const zoneinfoDir = "usr/share/zoneinfo"

// rootfsFiles is the root filesystem every image starts from: what the
// upstream base images (alpine with ca-certificates and tzdata for
// Karmada, distroless static for worker-operator) provide that the
// binaries use. Karmada installs tzdata for CronFederatedHPA's time zones.
//
// zoneinfo is the Go toolchain's lib/time/zoneinfo.zip (the toolchain
// that built the binaries, so the database is pinned with it, like the
// embedded time/tzdata package); nil leaves the time zones out.
func rootfsFiles(caBundle, zoneinfo []byte) ([]file, error) {
	files := []file{
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
		{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: caBundle},
		{Name: "home/nonroot", Dir: true, Mode: 0o700, UID: 65532, GID: 65532},
		// root's home, as in alpine and distroless.
		{Name: "root", Dir: true, Mode: 0o700},
		// Sticky and world-writable, as everywhere: libraries put
		// temporary files here.
		{Name: "tmp", Dir: true, Mode: 0o1777},
	}
	if zoneinfo == nil {
		return files, nil
	}
	zones, err := zoneinfoFiles(zoneinfo)
	if err != nil {
		return nil, err
	}
	return append(files, zones...), nil
}

// zoneinfoFiles unpacks a zoneinfo.zip into usr/share/zoneinfo.
func zoneinfoFiles(data []byte) ([]file, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("reading the time zone database: %w", err)
	}
	var files []file
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, "/") {
			continue // folders are added for the files they hold
		}
		name := path.Clean(zf.Name)
		if name != zf.Name || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("time zone database: entry %q is not a clean relative path", zf.Name)
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("time zone database: %s: %w", zf.Name, err)
		}
		content, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("time zone database: %s: %w", zf.Name, err)
		}
		files = append(files, file{Name: zoneinfoDir + "/" + name, Mode: 0o644, Data: content})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the time zone database holds no zone")
	}
	return files, nil
}
