package signing

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSignerRefusesBeforeRunningCosign(t *testing.T) {
	key := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(key, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Signer{
		"no mode":     {Cosign: "cosign"},
		"both":        {Cosign: "cosign", Key: key, Keyless: true},
		"no password": {Cosign: "cosign", Key: key, Env: []string{"PATH=/usr/bin"}},
		"no key file": {Cosign: "cosign", Key: key + ".missing", Env: []string{"COSIGN_PASSWORD="}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, s)
		}
	}
	s := &Signer{Cosign: "cosign", Key: "gcpkms://projects/p/locations/global/keyRings/r/cryptoKeys/k", Env: []string{}}
	if err := s.Validate(); err != nil {
		t.Errorf("a KMS key needs no file or password: %v", err)
	}
}
