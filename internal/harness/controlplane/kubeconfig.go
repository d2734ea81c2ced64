package controlplane

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig builds a one-context kubeconfig for the cluster with the given
// user.
func (c *Cluster) kubeconfig(user *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	return c.kubeconfigTrusting(user, c.CAData())
}

func (c *Cluster) kubeconfigTrusting(user *clientcmdapi.AuthInfo, ca []byte) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.name] = &clientcmdapi.Cluster{Server: c.endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos[c.name] = user
	cfg.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name}
	cfg.CurrentContext = c.name
	return cfg
}

// writeAdminKubeconfig writes the admin kubeconfig (mode 0600: it holds the
// admin token).
func (c *Cluster) writeAdminKubeconfig() error {
	// The admin's trust, both CAs, like the admin clients (RestartWithNextCA).
	cfg := c.kubeconfigTrusting(&clientcmdapi.AuthInfo{Token: c.adminToken}, c.adminTrust)
	if err := clientcmd.WriteToFile(*cfg, c.layout.adminKubeconfig()); err != nil {
		return fmt.Errorf("cluster %s: writing the admin kubeconfig: %w", c.name, err)
	}
	return nil
}

// WriteTokenKubeconfig writes a kubeconfig for the cluster whose user reads
// its bearer token from tokenFile (`tokenFile:`). client-go re-reads such a
// file periodically (transport.NewCachedFileTokenSource), so a process
// using it picks up a rotated token without restarting, which is what the
// own-credential guard is tested with.
func (c *Cluster) WriteTokenKubeconfig(path, tokenFile string) error {
	cfg := c.kubeconfig(&clientcmdapi.AuthInfo{TokenFile: tokenFile})
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("cluster %s: writing kubeconfig %s: %w", c.name, path, err)
	}
	return nil
}
