package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"
)

// reqFlags are the arguments of the chart's one openssl command line:
//
//	openssl req -x509 -sha256 -new -nodes -days 3650 -newkey rsa:3072 \
//	  -keyout KEY -out CERT -subj "/C=xx/.../CN=ca/emailAddress=x/"
type reqFlags struct {
	days            int
	bits            int
	keyOut, certOut string
	subject         pkix.Name
}

// openssl runs `openssl req -x509 -new`: a self-signed CA certificate and
// its unencrypted key, as OpenSSL 3 writes them (PKCS#8 key, the v3_ca
// extensions of its default configuration).
func openssl(args []string) error {
	if len(args) == 0 || args[0] != "req" {
		return fmt.Errorf("openssl stand-in: only `openssl req -x509 -new` is provided, not %q", args)
	}
	f, err := parseReq(args[1:])
	if err != nil {
		return fmt.Errorf("openssl stand-in: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, f.bits)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	cert, err := selfSigned(key, f.subject, f.days, time.Now())
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.keyOut, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(f.certOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert}), 0o644)
}

func parseReq(args []string) (reqFlags, error) {
	f := reqFlags{}
	seen := map[string]bool{}
	value := func(i int) (string, error) {
		if i+1 >= len(args) {
			return "", fmt.Errorf("req %s: missing its value", args[i])
		}
		return args[i+1], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		seen[a] = true
		switch a {
		case "-x509", "-new", "-nodes", "-sha256":
			continue
		case "-days", "-newkey", "-keyout", "-out", "-subj":
		default:
			return f, fmt.Errorf("req: option %q is not provided", a)
		}
		v, err := value(i)
		if err != nil {
			return f, err
		}
		i++
		switch a {
		case "-days":
			if f.days, err = strconv.Atoi(v); err != nil || f.days <= 0 {
				return f, fmt.Errorf("req -days %q: want a positive number", v)
			}
		case "-newkey":
			bits, ok := strings.CutPrefix(v, "rsa:")
			if f.bits, err = strconv.Atoi(bits); !ok || err != nil || f.bits < 2048 {
				return f, fmt.Errorf("req -newkey %q: want rsa:BITS, at least 2048", v)
			}
		case "-keyout":
			f.keyOut = v
		case "-out":
			f.certOut = v
		case "-subj":
			if f.subject, err = parseSubject(v); err != nil {
				return f, err
			}
		}
	}
	// Without these the real command would prompt, encrypt the key or
	// write a request instead of a certificate.
	for _, must := range []string{"-x509", "-new", "-nodes", "-days", "-newkey", "-keyout", "-out", "-subj"} {
		if !seen[must] {
			return f, fmt.Errorf("req: %s is required by this stand-in", must)
		}
	}
	return f, nil
}

var oidEmailAddress = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}

// parseSubject reads OpenSSL's -subj form, /type=value/type=value[/].
func parseSubject(s string) (pkix.Name, error) {
	var n pkix.Name
	if !strings.HasPrefix(s, "/") {
		return n, fmt.Errorf("req -subj %q: want /type=value/...", s)
	}
	for _, part := range strings.Split(strings.Trim(s, "/"), "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			return n, fmt.Errorf("req -subj %q: %q is not type=value", s, part)
		}
		switch k {
		case "C":
			n.Country = append(n.Country, v)
		case "ST":
			n.Province = append(n.Province, v)
		case "L":
			n.Locality = append(n.Locality, v)
		case "O":
			n.Organization = append(n.Organization, v)
		case "OU":
			n.OrganizationalUnit = append(n.OrganizationalUnit, v)
		case "CN":
			n.CommonName = v
		case "emailAddress":
			n.ExtraNames = append(n.ExtraNames, pkix.AttributeTypeAndValue{Type: oidEmailAddress, Value: v})
		default:
			return n, fmt.Errorf("req -subj %q: attribute type %q is not provided", s, k)
		}
	}
	return n, nil
}

// selfSigned is a CA certificate as `openssl req -x509` makes one with
// OpenSSL's default v3_ca section: basicConstraints critical CA:TRUE, the
// subject key identifier (SHA-1 of the public key) and the same as the
// authority key identifier, signed with SHA-256.
func selfSigned(key *rsa.PrivateKey, subject pkix.Name, days int, now time.Time) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(pub, &spki); err != nil {
		return nil, err
	}
	ski := sha1.Sum(spki.PublicKey.Bytes)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.AddDate(0, 0, days),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId:          ski[:],
		AuthorityKeyId:        ski[:],
		SignatureAlgorithm:    x509.SHA256WithRSA,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}
