package membercred

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
)

// Reasons a read of a kubeconfig file yields no usable credential; the last
// good one is kept. They are the `reason` label of
// holdfast_kubeconfig_credential_read_failures_total and
// KubeconfigHealth.LastErrorReason.
const (
	ReasonKubeconfigUnreadable = "kubeconfig_unreadable" // the kubeconfig file cannot be read
	ReasonKubeconfigInvalid    = "kubeconfig_invalid"    // it does not parse, or its current context is incomplete
	ReasonKubeconfigPlugin     = "kubeconfig_plugin"     // its user now authenticates through exec, an auth provider or basic auth
	ReasonTokenFileUnreadable  = "token_file_unreadable" // its tokenFile cannot be read
	ReasonClientCertUnreadable = "client_cert_unreadable"
	ReasonClientCertInvalid    = "client_cert_invalid" // certificate and key missing one another, or not a pair
	// ReasonEmptyToken, ReasonInvalidToken, ReasonCAFileUnreadable,
	// ReasonCABundleMissing and ReasonCABundleInvalid keep their meaning.
)

// MaxKubeconfigBytes is the largest kubeconfig, token, certificate or key
// file read: a Secret volume cannot hold more than 1 MiB, so only a wrong
// path (a device, a log) gives more, and it is refused without being read
// whole.
const MaxKubeconfigBytes = 1 << 20

// kubeconfigSpec is what a kubeconfig says about the credential of its
// current context, with relative paths resolved against the kubeconfig's
// folder as clientcmd's loading rules resolve them (ResolvePaths, from the
// folder of the path as given, not of a symlink's target).
type kubeconfigSpec struct {
	server             string
	insecure           bool
	token, tokenFile   string
	certData, keyData  []byte
	certFile, keyFile  string
	caData             []byte
	caFile             string
	plugin             string // "exec", "auth-provider" or "basic auth" when client-go's own
	hasClientCert      bool
	hasCA              bool
	certOrKeyMentioned bool
}

// kubeconfigError is why a read was refused: a bounded reason and a detail
// that names what is wrong, never a credential.
type kubeconfigError struct {
	reason, detail string
}

func (e *kubeconfigError) Error() string { return e.detail }

func refuse(reason, format string, args ...any) *kubeconfigError {
	return &kubeconfigError{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// parseKubeconfig decodes a kubeconfig with clientcmd.Load, the decoder
// clientcmd.BuildConfigFromFlags uses, and picks the credential of context,
// or of its current context when context is empty (a --context flag
// overrides current-context the same way in clientcmd). It reads no file (the fuzz target relies on that). It is
// stricter than clientcmd's merge, which fills a missing context, cluster or
// user with empty defaults and then fails validation or, for an empty file,
// falls back to the in-cluster config: a re-read must not switch a running
// client to another identity, so anything incomplete is refused and the last
// good credential kept.
func parseKubeconfig(raw []byte, dir, context string) (*kubeconfigSpec, *kubeconfigError) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, refuse(ReasonKubeconfigInvalid, "is empty")
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		// The decoder's messages name lines and Go types, not values; redact
		// anything token-shaped all the same.
		return nil, refuse(ReasonKubeconfigInvalid, "does not parse: %s", redact(err.Error(), nil))
	}
	name := context
	if name == "" {
		if cfg.CurrentContext == "" {
			return nil, refuse(ReasonKubeconfigInvalid, "has no current-context")
		}
		name = cfg.CurrentContext
	}
	ctx := cfg.Contexts[name]
	if ctx == nil {
		if context != "" {
			return nil, refuse(ReasonKubeconfigInvalid, "does not define context %q", context)
		}
		return nil, refuse(ReasonKubeconfigInvalid, "names current-context %q, which it does not define", name)
	}
	cluster := cfg.Clusters[ctx.Cluster]
	if cluster == nil {
		return nil, refuse(ReasonKubeconfigInvalid, "context %q names cluster %q, which it does not define", name, ctx.Cluster)
	}
	user := cfg.AuthInfos[ctx.AuthInfo]
	if user == nil {
		return nil, refuse(ReasonKubeconfigInvalid, "context %q names user %q, which it does not define", name, ctx.AuthInfo)
	}
	cluster, user = cluster.DeepCopy(), user.DeepCopy()
	_ = clientcmd.ResolvePaths(clientcmd.GetClusterFileReferences(cluster), dir) // never fails
	_ = clientcmd.ResolvePaths(clientcmd.GetAuthInfoFileReferences(user), dir)

	s := &kubeconfigSpec{
		server:    cluster.Server,
		insecure:  cluster.InsecureSkipTLSVerify,
		token:     user.Token,
		tokenFile: user.TokenFile,
		certData:  user.ClientCertificateData,
		keyData:   user.ClientKeyData,
		certFile:  user.ClientCertificate,
		keyFile:   user.ClientKey,
		caData:    cluster.CertificateAuthorityData,
		caFile:    cluster.CertificateAuthority,
	}
	switch {
	case user.Exec != nil:
		s.plugin = "exec"
	case user.AuthProvider != nil:
		s.plugin = "auth-provider"
	case user.Username != "" || user.Password != "":
		s.plugin = "basic auth"
	}
	if s.server == "" {
		return nil, refuse(ReasonKubeconfigInvalid, "cluster %q has no server", ctx.Cluster)
	}
	// clientcmd takes a client certificate when either of its fields is set
	// (getUserIdentificationPartialConfig), and client-go then prefers data
	// to a file (transport.dataFromSliceOrFile).
	s.certOrKeyMentioned = len(s.certData) != 0 || s.certFile != "" || len(s.keyData) != 0 || s.keyFile != ""
	s.hasClientCert = len(s.certData) != 0 || s.certFile != ""
	s.hasCA = len(s.caData) != 0 || s.caFile != ""
	return s, nil
}

// kubeconfigFiles is what a read found: the credential, and the files it
// came from, to tell a change.
type kubeconfigRead struct {
	token string
	cert  *tls.Certificate
	ca    *caSnapshot
	spec  *kubeconfigSpec
}

// readKubeconfigCredential reads the kubeconfig at path and the files it
// names, and returns the credential of context ("": the current context)
// they hold now.
func readKubeconfigCredential(path, context string) (*kubeconfigRead, *kubeconfigError) {
	raw, err := readBounded(path)
	if err != nil {
		return nil, refuse(ReasonKubeconfigUnreadable, "cannot be read: %v", err)
	}
	spec, kerr := parseKubeconfig(raw, filepath.Dir(path), context)
	if kerr != nil {
		return nil, kerr
	}
	if spec.plugin != "" {
		return nil, refuse(ReasonKubeconfigPlugin, "authenticates with %s, which client-go refreshes itself; this credential follows only tokens and client certificates", spec.plugin)
	}
	out := &kubeconfigRead{spec: spec}

	// Token: client-go's bearer round tripper sends what tokenFile holds
	// whenever it can read it, else the inline token
	// (transport.NewBearerAuthWithRefreshRoundTripper), so the same here.
	rawToken := []byte(spec.token)
	if spec.tokenFile != "" {
		b, err := readBounded(spec.tokenFile)
		switch {
		case err == nil:
			rawToken = b
		case spec.token == "":
			return nil, refuse(ReasonTokenFileUnreadable, "names tokenFile %s, which cannot be read: %v", spec.tokenFile, err)
		}
	}
	if len(rawToken) != 0 {
		tok, reason := normalizeToken(rawToken)
		if reason != "" {
			return nil, refuse(reason, "holds a token that is not usable as a bearer token (%s)", reason)
		}
		out.token = tok
	}

	if spec.certOrKeyMentioned {
		cert, kerr := readClientCert(spec)
		if kerr != nil {
			return nil, kerr
		}
		out.cert = cert
	}

	if spec.hasCA && !spec.insecure {
		caRaw := spec.caData
		if len(caRaw) == 0 {
			b, err := readBounded(spec.caFile)
			if err != nil {
				return nil, refuse(ReasonCAFileUnreadable, "names certificate-authority %s, which cannot be read: %v", spec.caFile, err)
			}
			caRaw = b
		}
		snap, detail := parseCABundle(caRaw)
		if detail != "" {
			return nil, refuse(ReasonCABundleInvalid, "has a certificate authority that %s", detail)
		}
		out.ca = snap
	}
	return out, nil
}

// readClientCert builds the client certificate as client-go does (data
// before file, tls.X509KeyPair). Its errors never quote the key.
func readClientCert(spec *kubeconfigSpec) (*tls.Certificate, *kubeconfigError) {
	certPEM, keyPEM := spec.certData, spec.keyData
	if len(certPEM) == 0 && spec.certFile != "" {
		b, err := readBounded(spec.certFile)
		if err != nil {
			return nil, refuse(ReasonClientCertUnreadable, "names client-certificate %s, which cannot be read: %v", spec.certFile, err)
		}
		certPEM = b
	}
	if len(keyPEM) == 0 && spec.keyFile != "" {
		b, err := readBounded(spec.keyFile)
		if err != nil {
			return nil, refuse(ReasonClientCertUnreadable, "names client-key %s, which cannot be read: %v", spec.keyFile, err)
		}
		keyPEM = b
	}
	switch {
	case len(certPEM) == 0:
		return nil, refuse(ReasonClientCertInvalid, "has a client key but no client certificate")
	case len(keyPEM) == 0:
		return nil, refuse(ReasonClientCertInvalid, "has a client certificate but no client key")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// crypto/tls's messages describe the failure ("private key does not
		// match public key"), never the key's bytes.
		return nil, refuse(ReasonClientCertInvalid, "has a client certificate and key that are not a usable pair: %v", err)
	}
	return &cert, nil
}

// readBounded reads at most MaxKubeconfigBytes of path, following symlinks
// (a kubelet Secret volume's ..data). Its error names the path, never
// content.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxKubeconfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(raw) > MaxKubeconfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxKubeconfigBytes)
	}
	return raw, nil
}

// fileStamp is what a stat says about one file, to notice a change without
// reading it: a kubelet Secret volume swaps ..data, which gives the path
// another inode; an editor's in-place write changes the size or mtime.
type fileStamp struct {
	info os.FileInfo
	err  bool
}

func stampsOf(paths []string) []fileStamp {
	out := make([]fileStamp, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		out[i] = fileStamp{info: fi, err: err != nil}
	}
	return out
}

func stampsEqual(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.err || y.err {
			if x.err != y.err {
				return false
			}
			continue
		}
		if !os.SameFile(x.info, y.info) || !x.info.ModTime().Equal(y.info.ModTime()) || x.info.Size() != y.info.Size() {
			return false
		}
	}
	return true
}

// watchedPaths lists the kubeconfig and every file its credential came
// from.
func (r *kubeconfigRead) watchedPaths(path string) []string {
	out := []string{path}
	if r == nil || r.spec == nil {
		return out
	}
	for _, p := range []string{r.spec.tokenFile, r.spec.certFile, r.spec.keyFile, r.spec.caFile} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
