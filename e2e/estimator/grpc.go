package estimator

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
)

// maxAvailableReplicasMethod is the estimator's gRPC method
// (pkg/estimator/service/service.proto of the pinned Karmada release:
// package github.com.karmada_io.karmada.pkg.estimator.service, service
// Estimator).
const maxAvailableReplicasMethod = "/github.com.karmada_io.karmada.pkg.estimator.service.Estimator/MaxAvailableReplicas"

// The fields of pkg/estimator/pb/estimator.proto this client writes and
// reads: MaxAvailableReplicasRequest{cluster = 1, replicaRequirements = 2},
// ReplicaRequirements{resourceRequestBytes = 5: map<string, bytes>, each a
// proto-serialized resource.Quantity, the field the estimator reads first},
// MaxAvailableReplicasResponse{maxReplicas = 1}.
const (
	requestClusterField      protowire.Number = 1
	requestRequirementsField protowire.Number = 2
	requirementsBytesField   protowire.Number = 5 // 4 is priorityClassName (v1.18.2)
	responseMaxReplicasField protowire.Number = 1
)

// Client calls one estimator's MaxAvailableReplicas over HTTP/2, as
// Karmada's scheduler does: without TLS when the estimator serves no
// certificate (NewClient), over mutual TLS when it does (NewTLSClient, as
// holdfast's and upstream's chart deploy it).
type Client struct {
	addr   string // host:port
	scheme string
	http   *http.Client
}

// maxAnswerBytes bounds what is read of an answer: MaxAvailableReplicas's
// is a few bytes, and a misbehaving server must not cost the test's memory.
const maxAnswerBytes = 1 << 20

// NewClient is a client of the estimator at addr serving gRPC without TLS.
func NewClient(addr string) *Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &Client{addr: addr, scheme: "http", http: &http.Client{Transport: &http.Transport{Protocols: &p}}}
}

// NewTLSClient is a client of the estimator at addr serving gRPC over TLS;
// cfg holds the client certificate, the CA and the server name to check.
func NewTLSClient(addr string, cfg *tls.Config) *Client {
	var p http.Protocols
	p.SetHTTP2(true)
	return &Client{addr: addr, scheme: "https", http: &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: cfg}}}
}

// MaxAvailableReplicas asks how many replicas requesting request the
// estimator of cluster can place.
func (c *Client) MaxAvailableReplicas(ctx context.Context, cluster string, request corev1.ResourceList) (int32, error) {
	msg, err := encodeMaxAvailableReplicasRequest(cluster, request)
	if err != nil {
		return 0, err
	}
	out, err := c.call(ctx, maxAvailableReplicasMethod, msg)
	if err != nil {
		return 0, err
	}
	return decodeMaxAvailableReplicasResponse(out)
}

// call sends one unary gRPC request: a length-prefixed message in a POST
// to the method's path, the status in the trailers (or, for an error
// without a body, the headers).
func (c *Client) call(ctx context.Context, method string, msg []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.scheme+"://"+c.addr+method, bytes.NewReader(frame(msg)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("estimator %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("estimator %s: reading the answer: %w", c.addr, err)
	}
	if len(body) > maxAnswerBytes {
		return nil, fmt.Errorf("estimator %s: answer larger than %d bytes", c.addr, maxAnswerBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("estimator %s: HTTP %s", c.addr, resp.Status)
	}
	status, message := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, message = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if status != "0" {
		if m, err := url.PathUnescape(message); err == nil {
			message = m
		}
		return nil, fmt.Errorf("estimator %s: gRPC status %q: %s", c.addr, status, message)
	}
	return unframe(body)
}

// frame is a gRPC message on the wire: not compressed, its length, itself.
func frame(msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// unframe is the one message of a unary answer.
func unframe(body []byte) ([]byte, error) {
	if len(body) < 5 {
		return nil, fmt.Errorf("gRPC answer of %d bytes: no message", len(body))
	}
	if body[0] != 0 {
		return nil, errors.New("gRPC answer is compressed; none was asked for")
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(len(body)-5) != uint64(n) {
		return nil, fmt.Errorf("gRPC answer: message of %d bytes announced, %d sent", n, len(body)-5)
	}
	return body[5:], nil
}

// encodeMaxAvailableReplicasRequest is a MaxAvailableReplicasRequest for
// cluster whose replicas each request request.
func encodeMaxAvailableReplicasRequest(cluster string, request corev1.ResourceList) ([]byte, error) {
	var requirements []byte
	names := make([]string, 0, len(request))
	for name := range request {
		names = append(names, string(name))
	}
	slices.Sort(names) // a stable encoding, for the tests
	for _, name := range names {
		q := request[corev1.ResourceName(name)]
		value, err := q.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", name, q.String(), err)
		}
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, name)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendBytes(entry, value)
		requirements = protowire.AppendTag(requirements, requirementsBytesField, protowire.BytesType)
		requirements = protowire.AppendBytes(requirements, entry)
	}
	var out []byte
	out = protowire.AppendTag(out, requestClusterField, protowire.BytesType)
	out = protowire.AppendString(out, cluster)
	out = protowire.AppendTag(out, requestRequirementsField, protowire.BytesType)
	out = protowire.AppendBytes(out, requirements)
	return out, nil
}

// decodeMaxAvailableReplicasResponse reads maxReplicas; absent is 0, as
// proto3 leaves a zero out.
func decodeMaxAvailableReplicasResponse(msg []byte) (int32, error) {
	var replicas int32
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return 0, fmt.Errorf("MaxAvailableReplicasResponse: %w", protowire.ParseError(n))
		}
		msg = msg[n:]
		if num == responseMaxReplicasField && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(msg)
			if n < 0 {
				return 0, fmt.Errorf("MaxAvailableReplicasResponse.maxReplicas: %w", protowire.ParseError(n))
			}
			replicas = int32(v) // #nosec G115 -- an int32 field on the wire
			msg = msg[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return 0, fmt.Errorf("MaxAvailableReplicasResponse field %d: %w", num, protowire.ParseError(n))
		}
		msg = msg[n:]
	}
	return replicas, nil
}
