package hubfollow

import (
	"os"
	"reflect"
	"testing"

	"k8s.io/client-go/rest"
)

// v164HubRESTConfig reproduces how worker-operator v1.6.4 builds its hub
// rest.Config (pkg/hub/hubclient/hubclient.go NewHubClientConfig and
// pkg/hub/manager/manager.go Start, with the HubTokenFile/HubCAFile package
// vars from vars.go and utils.GetEnvOrDefault).
func v164HubRESTConfig() *rest.Config {
	getEnvOrDefault := func(key, def string) string { // pkg/utils/utils.go
		val, ok := os.LookupEnv(key)
		if !ok {
			return def
		}
		return val
	}
	HubTokenFile := getEnvOrDefault("HUB_TOKEN_FILE", "/var/run/secrets/kubernetes.io/hub-serviceaccount/token")
	HubCAFile := getEnvOrDefault("HUB_CA_FILE", "/var/run/secrets/kubernetes.io/hub-serviceaccount/ca.crt")
	return &rest.Config{
		Host:            os.Getenv("HUB_HOST_ENDPOINT"),
		BearerTokenFile: HubTokenFile,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: HubCAFile,
		},
	}
}

func TestPrimaryRESTConfigIsV164s(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string // unset when absent
	}{
		{name: "defaults", env: map[string]string{"HUB_HOST_ENDPOINT": "https://hub-a.example.com:6443"}},
		{name: "all set", env: map[string]string{
			"HUB_HOST_ENDPOINT": "https://hub-a.example.com", "HUB_TOKEN_FILE": "/t/token", "HUB_CA_FILE": "/t/ca.crt",
		}},
		{name: "set but empty stays empty", env: map[string]string{"HUB_HOST_ENDPOINT": "", "HUB_TOKEN_FILE": "", "HUB_CA_FILE": ""}},
		{name: "nothing set", env: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"HUB_HOST_ENDPOINT", "HUB_TOKEN_FILE", "HUB_CA_FILE"} {
				if v, ok := tt.env[k]; ok {
					t.Setenv(k, v)
				} else {
					t.Setenv(k, "")
					os.Unsetenv(k) // t.Setenv restores the original afterwards
				}
			}
			got := PrimaryFromEnv(os.LookupEnv).RESTConfig()
			if want := v164HubRESTConfig(); !reflect.DeepEqual(got, want) {
				t.Errorf("RESTConfig() = %#v\nwant v1.6.4's %#v", got, want)
			}
		})
	}
}

func TestSecondaryFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Connection
	}{
		{
			name: "unset is off, files default to the secondary mount",
			env:  map[string]string{},
			want: Connection{Name: SecondaryName, TokenFile: DefaultSecondaryTokenFile, CAFile: DefaultSecondaryCAFile},
		},
		{
			name: "all set",
			env: map[string]string{
				EnvSecondaryEndpoint: "https://hub-b:6443", EnvSecondaryTokenFile: "/b/token", EnvSecondaryCAFile: "/b/ca.crt",
				// The primary's files never leak into the secondary.
				EnvPrimaryTokenFile: "/a/token", EnvPrimaryCAFile: "/a/ca.crt",
			},
			want: Connection{Name: SecondaryName, Endpoint: "https://hub-b:6443", TokenFile: "/b/token", CAFile: "/b/ca.crt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SecondaryFromEnv(envMap(tt.env)); got != tt.want {
				t.Errorf("SecondaryFromEnv() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSecondaryRESTConfigCarriesItsOwnCredential(t *testing.T) {
	c := Connection{Name: SecondaryName, Endpoint: "https://hub-b:6443", TokenFile: "/b/token", CAFile: "/b/ca.crt"}
	want := &rest.Config{Host: "https://hub-b:6443", BearerTokenFile: "/b/token", TLSClientConfig: rest.TLSClientConfig{CAFile: "/b/ca.crt"}}
	if got := c.RESTConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("RESTConfig() = %#v, want %#v", got, want)
	}
}
