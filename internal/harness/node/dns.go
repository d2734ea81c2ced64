package node

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dnsPort is CoreDNS's listener inside its pod. The CoreDNS stand-in has no
// cap_net_bind_service file capability and runs as 65532, so it cannot
// bind 53; the Service maps 53 to this port instead.
const dnsPort = 1053

// dnsManifest is cluster DNS as kubeadm deploys it, reduced to what the
// charts need: the cluster.local zone from the API, nothing forwarded
// (the network rule: no lookup leaves the node).
func dnsManifest(image, serviceIP string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {kind: ServiceAccount, name: coredns, namespace: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:%[3]d {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 5
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      containers:
      - name: coredns
        image: %[1]s
        imagePullPolicy: IfNotPresent
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {containerPort: %[3]d, name: dns, protocol: UDP}
        - {containerPort: %[3]d, name: dns-tcp, protocol: TCP}
        volumeMounts:
        - {name: config, mountPath: /etc/coredns, readOnly: true}
        livenessProbe:
          httpGet: {path: /health, port: 8080}
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 2
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: %[2]s
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, targetPort: %[3]d, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: %[3]d, protocol: TCP}
`, image, serviceIP, dnsPort)
}

// StartDNS deploys cluster DNS (CoreDNS from the OCI layout at layout,
// imported first) behind the ClusterIP kubelet gives every pod as its name
// server, and waits for it to be Ready.
func (n *Node) StartDNS(ctx context.Context, layout string) error {
	img, err := n.ImportLayout(ctx, layout)
	if err != nil {
		return err
	}
	if err := n.cluster.ApplyYAML(ctx, []byte(dnsManifest(img.Name, n.net.dnsServiceIP().String()))); err != nil {
		return fmt.Errorf("node %s: deploying cluster DNS: %w", n.opts.Name, err)
	}
	for {
		d, err := n.cluster.Kubernetes().AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err == nil && d.Status.ReadyReplicas == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s: cluster DNS (kube-system/coredns) not Ready: %w", n.opts.Name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
