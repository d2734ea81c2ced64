package hubfollow

import (
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// Environment variables naming a hub connection. The primary's names and
// defaults are worker-operator v1.6.4's (pkg/hub/hubclient/vars.go); the
// secondary's are upstream's HA branch.
const (
	EnvPrimaryEndpoint  = "HUB_HOST_ENDPOINT"
	EnvPrimaryTokenFile = "HUB_TOKEN_FILE"
	EnvPrimaryCAFile    = "HUB_CA_FILE"

	EnvSecondaryEndpoint  = "HUB_SECONDARY_HOST_ENDPOINT"
	EnvSecondaryTokenFile = "HUB_SECONDARY_TOKEN_FILE"
	EnvSecondaryCAFile    = "HUB_SECONDARY_CA_FILE"

	DefaultPrimaryTokenFile   = "/var/run/secrets/kubernetes.io/hub-serviceaccount/token"
	DefaultPrimaryCAFile      = "/var/run/secrets/kubernetes.io/hub-serviceaccount/ca.crt"
	DefaultSecondaryTokenFile = "/var/run/secrets/kubernetes.io/hub-secondary-serviceaccount/token"
	DefaultSecondaryCAFile    = "/var/run/secrets/kubernetes.io/hub-secondary-serviceaccount/ca.crt"
)

// Hub slot names. They label logs and metrics ({hub="primary"}), so they are
// part of the metrics contract.
const (
	PrimaryName   = "primary"
	SecondaryName = "secondary"
)

// Connection is everything needed to talk to one hub. The endpoint and the
// credential that hub minted are only valid together, so they travel as one
// value: upstream once moved the endpoint without its token and built a client
// aimed at one hub that authenticated as the other, which surfaced as a TLS or
// authorization error that read like a network fault.
type Connection struct {
	// Name is the slot, PrimaryName or SecondaryName.
	Name string
	// Endpoint is the hub API server URL exactly as configured. It is used
	// verbatim in RESTConfig; comparisons normalise it first.
	Endpoint string
	// TokenFile holds the bearer token the hub minted for this worker.
	// client-go re-reads it (every minute) so a rotated token is picked up.
	TokenFile string
	// CAFile holds the PEM bundle that verifies the hub's serving certificate.
	CAFile string
}

// LookupEnvFunc has the shape of os.LookupEnv.
type LookupEnvFunc func(key string) (string, bool)

// PrimaryFromEnv is the connection worker-operator v1.6.4 has always built:
// os.Getenv for the endpoint and its GetEnvOrDefault for the files, where a
// variable that is set but empty stays empty (only an unset one takes the
// default). Reproducing that exactly keeps a non-HA worker byte-identical.
func PrimaryFromEnv(lookup LookupEnvFunc) Connection {
	return Connection{
		Name:      PrimaryName,
		Endpoint:  getEnv(lookup, EnvPrimaryEndpoint),
		TokenFile: getEnvOrDefault(lookup, EnvPrimaryTokenFile, DefaultPrimaryTokenFile),
		CAFile:    getEnvOrDefault(lookup, EnvPrimaryCAFile, DefaultPrimaryCAFile),
	}
}

// SecondaryFromEnv is the Standby hub's connection. Its Endpoint is empty when
// HUB_SECONDARY_HOST_ENDPOINT is unset, which turns the feature off.
func SecondaryFromEnv(lookup LookupEnvFunc) Connection {
	return Connection{
		Name:      SecondaryName,
		Endpoint:  getEnv(lookup, EnvSecondaryEndpoint),
		TokenFile: getEnvOrDefault(lookup, EnvSecondaryTokenFile, DefaultSecondaryTokenFile),
		CAFile:    getEnvOrDefault(lookup, EnvSecondaryCAFile, DefaultSecondaryCAFile),
	}
}

// RESTConfig is the client configuration for this hub. For the primary it is
// field for field the one worker-operator v1.6.4 builds in
// hubclient.NewHubClientConfig and manager.Start: the token and CA are passed
// as files, never read into BearerToken/CAData, so client-go keeps re-reading
// a rotated token and the worker's behaviour does not change. QPS, Burst and
// Timeout stay unset, as in v1.6.4.
func (c Connection) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Endpoint,
		BearerTokenFile: c.TokenFile,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: c.CAFile,
		},
	}
}

// ClientConfig is RESTConfig whose new connections verify the hub against
// what CAFile holds now (membercred.TrustCAFile) instead of what it held when
// client-go built the transport: the file is re-read at most a minute after
// the last read and at once when a handshake fails verification, so a hub
// whose CA was renewed (the kubelet swapping the Secret volume's file) is
// reached again without restarting the worker. With the file unchanged the
// worker connects, and sends, exactly what RESTConfig does.
func (c Connection) ClientConfig() *rest.Config {
	cfg := c.RESTConfig()
	membercred.TrustCAFile(cfg)
	return cfg
}

// String names the connection for logs: slot and endpoint (with any userinfo
// redacted), never the credential.
func (c Connection) String() string {
	return c.Name + " (" + redactEndpoint(c.Endpoint) + ")"
}

func getEnv(lookup LookupEnvFunc, key string) string {
	v, _ := lookup(key)
	return v
}

func getEnvOrDefault(lookup LookupEnvFunc, key, def string) string {
	if v, ok := lookup(key); ok {
		return v
	}
	return def
}
