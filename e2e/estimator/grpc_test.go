package estimator

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fakeEstimator serves the method over HTTP/2 without TLS, as grpc-go does:
// it checks the request the way the estimator reads it and answers
// replicas, or status when it is not "0".
func fakeEstimator(t *testing.T, replicas int32, status string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc(maxAvailableReplicasMethod, func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/grpc" {
			t.Errorf("Content-Type %q", ct)
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := unframe(body)
		if err != nil {
			t.Error(err)
		}
		cluster, cpu := readRequest(t, msg)
		if cluster != "member1" || cpu != "1500m" {
			t.Errorf("request: cluster %q cpu %q", cluster, cpu)
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		if status != "0" {
			w.Header().Set("Grpc-Status", status)
			w.Header().Set("Grpc-Message", "failed%20to%20estimate")
			return
		}
		var out []byte
		out = protowire.AppendTag(out, 1, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(replicas))
		_, _ = w.Write(frame(out))
		w.Header().Set("Grpc-Status", "0")
	})
	return serveH2C(t, mux)
}

// serveH2C serves h over HTTP/2 without TLS on 127.0.0.1, as grpc-go
// serves an estimator with no certificate, until the test ends.
func serveH2C(t *testing.T, h http.Handler) string {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// readRequest decodes what encodeMaxAvailableReplicasRequest wrote, with
// resource.Quantity's own Unmarshal, as the estimator does.
func readRequest(t *testing.T, msg []byte) (cluster, cpu string) {
	t.Helper()
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		msg = msg[n:]
		v, n := protowire.ConsumeBytes(msg)
		if typ != protowire.BytesType || n < 0 {
			t.Fatalf("field %d: type %v", num, typ)
		}
		msg = msg[n:]
		switch num {
		case 1:
			cluster = string(v)
		case 2:
			for len(v) > 0 {
				num, _, n := protowire.ConsumeTag(v)
				v = v[n:]
				entry, n := protowire.ConsumeBytes(v)
				v = v[n:]
				if num != 5 { // resourceRequestBytes; 4 is priorityClassName
					t.Fatalf("ReplicaRequirements field %d", num)
				}
				var key string
				var value []byte
				for len(entry) > 0 {
					num, _, n := protowire.ConsumeTag(entry)
					entry = entry[n:]
					b, n := protowire.ConsumeBytes(entry)
					entry = entry[n:]
					if num == 1 {
						key = string(b)
					} else {
						value = b
					}
				}
				var q resource.Quantity
				if err := q.Unmarshal(value); err != nil {
					t.Fatal(err)
				}
				if key == "cpu" {
					cpu = q.String()
				}
			}
		}
	}
	return cluster, cpu
}

func TestMaxAvailableReplicas(t *testing.T) {
	request := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1.5")}
	c := NewClient(fakeEstimator(t, 7, "0"))
	got, err := c.MaxAvailableReplicas(t.Context(), "member1", request)
	if err != nil || got != 7 {
		t.Fatalf("MaxAvailableReplicas = %d, %v; want 7", got, err)
	}

	c = NewClient(fakeEstimator(t, 0, "2"))
	_, err = c.MaxAvailableReplicas(t.Context(), "member1", request)
	if err == nil || !strings.Contains(err.Error(), `gRPC status "2": failed to estimate`) {
		t.Fatalf("error = %v, want the gRPC status and its message", err)
	}
}

func TestUnframe(t *testing.T) {
	if _, err := unframe([]byte{0, 0, 0}); err == nil {
		t.Error("a short answer was read")
	}
	b := frame([]byte("abc"))
	if got, err := unframe(b); err != nil || string(got) != "abc" {
		t.Errorf("unframe(frame(abc)) = %q, %v", got, err)
	}
	binary.BigEndian.PutUint32(b[1:], 9)
	if _, err := unframe(b); err == nil {
		t.Error("a truncated message was read")
	}
	b[0] = 1
	if _, err := unframe(b); err == nil {
		t.Error("a compressed message was read")
	}
}

func TestDecodeSkipsUnknownFields(t *testing.T) {
	var msg []byte
	msg = protowire.AppendTag(msg, 9, protowire.BytesType)
	msg = protowire.AppendString(msg, "later field")
	msg = protowire.AppendTag(msg, 1, protowire.VarintType)
	msg = protowire.AppendVarint(msg, 12)
	if got, err := decodeMaxAvailableReplicasResponse(msg); err != nil || got != 12 {
		t.Errorf("decode = %d, %v; want 12", got, err)
	}
	if got, err := decodeMaxAvailableReplicasResponse(nil); err != nil || got != 0 {
		t.Errorf("decode(empty) = %d, %v; want 0 (proto3 default)", got, err)
	}
}

// TestAnswerIsBounded: a server that answers without end costs the client
// at most maxAnswerBytes, and an error naming the bound.
func TestAnswerIsBounded(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc(maxAvailableReplicasMethod, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		chunk := make([]byte, 64<<10)
		for range 2 * maxAnswerBytes / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	_, err := NewClient(serveH2C(t, mux)).MaxAvailableReplicas(t.Context(), "member1", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	if err == nil || !strings.Contains(err.Error(), "answer larger than 1048576 bytes") {
		t.Fatalf("error = %v, want the bound named", err)
	}
}
