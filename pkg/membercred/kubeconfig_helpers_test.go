package membercred

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeAPI is an API server for the kubeconfig tests: a tlsMember (its
// serving certificate can be replaced; it counts connections) accepting the
// bearer tokens and the client certificates (by common name, issued by its
// client CA) it is told to and answering 401 otherwise. It records what
// authenticated each request.
type kubeAPI struct {
	*tlsMember
	clientCA *testCA

	mu     sync.Mutex
	tokens map[string]bool
	cns    map[string]bool
	seen   []string // "token:T" or "cert:CN" or "none", per request
}

func newKubeAPI(t testing.TB, serving tls.Certificate, clientCA *testCA) *kubeAPI {
	t.Helper()
	a := &kubeAPI{clientCA: clientCA, tokens: map[string]bool{}, cns: map[string]bool{}}
	pool := x509.NewCertPool() // empty without a client CA: a certificate sent is refused
	if clientCA != nil {
		pool.AddCert(clientCA.cert)
	}
	a.tlsMember = startTLSMember(t, "", http.HandlerFunc(a.serve), serving, false, pool)
	return a
}

// accept replaces what authenticates: tokens, and "cert:CN" entries.
func (a *kubeAPI) accept(creds ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens, a.cns = map[string]bool{}, map[string]bool{}
	for _, c := range creds {
		if cn, ok := strings.CutPrefix(c, "cert:"); ok {
			a.cns[cn] = true
		} else {
			a.tokens[c] = true
		}
	}
}

func (a *kubeAPI) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	who := "none"
	ok := false
	a.mu.Lock()
	if tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		who, ok = "token:"+tok, a.tokens[tok]
	} else if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn := r.TLS.PeerCertificates[0].Subject.CommonName
		who, ok = "cert:"+cn, a.cns[cn]
	}
	a.seen = append(a.seen, who)
	a.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, unauthorizedBody)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func (a *kubeAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// client issues a client certificate and key, PEM, for cn.
func (ca *testCA) client(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// kubeconfigFile describes a kubeconfig; file fields name files of the
// same volume, relative, as a kubeconfig in a Secret does.
type kubeconfigFile struct {
	server            string
	token, tokenFile  string
	cert, key         []byte
	certFile, keyFile string
	ca                []byte
	caFile            string
	insecure          bool
	exec              bool
}

func (c kubeconfigFile) bytes(t testing.TB) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["member"] = &clientcmdapi.Cluster{
		Server: c.server, CertificateAuthorityData: c.ca, CertificateAuthority: c.caFile, InsecureSkipTLSVerify: c.insecure,
	}
	user := &clientcmdapi.AuthInfo{
		Token: c.token, TokenFile: c.tokenFile,
		ClientCertificateData: c.cert, ClientKeyData: c.key, ClientCertificate: c.certFile, ClientKey: c.keyFile,
	}
	if c.exec {
		user.Exec = &clientcmdapi.ExecConfig{Command: "true", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	}
	cfg.AuthInfos["estimator"] = user
	cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "estimator"}
	cfg.CurrentContext = "member"
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// kubeconfigVolume is a kubelet Secret volume: every file is a symlink to
// ..data/<name>, and publish swaps ..data to a new folder at once.
type kubeconfigVolume struct {
	dir   string
	gen   int
	names map[string]bool
}

func newKubeconfigVolume(t testing.TB, files map[string][]byte) *kubeconfigVolume {
	t.Helper()
	v := &kubeconfigVolume{dir: t.TempDir(), names: map[string]bool{}}
	v.publish(t, files)
	return v
}

func (v *kubeconfigVolume) path() string { return filepath.Join(v.dir, "config") }

func (v *kubeconfigVolume) publish(t testing.TB, files map[string][]byte) {
	t.Helper()
	v.gen++
	data := fmt.Sprintf("..2026_12_05_%02d", v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, data), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(v.dir, data, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
		if !v.names[name] {
			v.names[name] = true
			if err := os.Symlink(filepath.Join("..data", name), filepath.Join(v.dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	swapData(t, v.dir, data)
}

// followed builds a client config from the kubeconfig at path as a patched
// binary does (NewKubeconfigCredential with opts, installed on what
// clientcmd.BuildConfigFromFlags returns). staticKubeconfig makes it return
// clientcmd's config alone: the RED baseline the rule tests were first run
// against.
func followed(t testing.TB, path string, opts KubeconfigOptions) (*KubeconfigCredential, *rest.Config) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("BuildConfigFromFlags: %v", err)
	}
	if staticKubeconfig {
		return nil, cfg
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = discardLogger()
	}
	k, err := NewKubeconfigCredential(path, opts)
	if err != nil {
		t.Fatalf("NewKubeconfigCredential: %v", err)
	}
	k.Install(cfg)
	return k, cfg
}

const staticKubeconfig = false

// waitIdle waits for the read under way, if any.
func (k *KubeconfigCredential) waitIdle() {
	if k == nil {
		return
	}
	k.mu.Lock()
	r := k.inFlight
	k.mu.Unlock()
	if r != nil {
		<-r.done
	}
}

func statusOf(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
