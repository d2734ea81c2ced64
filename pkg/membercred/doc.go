// Package membercred is the credential transport for long-lived Kubernetes
// clients whose bearer token or server CA can change under them.
//
// Its parts (the member's token and CA, and the process's own credential,
// which must not be confused with them):
//
//   - SecretTokenSource: the credential of a push-mode Karmada MEMBER cluster.
//     Karmada's BuildClusterConfig copies the token out of the cluster's Secret
//     into rest.Config.BearerToken once, so long-lived informers keep a frozen
//     token and fail with 401 forever after the Secret is rotated and the old
//     token revoked. A SecretTokenSource re-reads the Secret every
//     RefreshPeriod (stale-while-revalidate: no request ever waits behind a
//     read while a token is cached) and, on a 401, forces a coalesced re-read
//     and replays the request once with the new token, so a caller never sees
//     a 401 while the Secret already holds a valid token. Install it with
//     cfg.Wrap(src.WrapTransport) AFTER any wrapper that type-asserts its inner
//     round tripper (Karmada's proxy-header wrapper expects *http.Transport).
//     The glue should keep one source per cluster (not one per rest.Config
//     built) and call Metrics.Forget when a cluster is removed.
//
//   - The member's CA bundle, the other half of the same Secret (and, with
//     TrustCAFile, a CA file such as a worker's HUB_CA_FILE).
//     BuildClusterConfig copies caBundle into TLSClientConfig.CAData once,
//     so after the member API server's CA is renewed every new connection
//     of a long-lived client fails with "x509: certificate signed by unknown
//     authority" until the process restarts. src.TrustSecretCABundle(cfg)
//     makes each new TLS connection verify against the bundle the source
//     holds now: it is taken from the same Secret reads as the token (no
//     extra request), a verification failure forces a read as a 401 does
//     (single flight, MinForcedRefreshInterval, MaxReadWait), a bundle that
//     withdraws a certificate closes the member's connections
//     (k8s.io/client-go/util/connrotation), and a bundle without a usable
//     certificate is refused with the last good one kept. Verification is
//     crypto/tls's own (RootCAs per connection) for direct connections and
//     the same x509 check in VerifyConnection where net/http does the
//     handshake (through a proxy); never system roots, never skipped.
//
//   - KubeconfigCredential: a kubeconfig FILE's token, client certificate and
//     CA, for processes that read theirs once (karmada-scheduler-estimator's
//     member kubeconfig, karmada-agent's control-plane one).
//     RestConfigFromKubeconfig is clientcmd.BuildConfigFromFlags whose
//     clients use what the file holds now, by the member Secret's rules:
//     re-read on change and every minute, at once on a 401 or a TLS failure,
//     401 replayed when replayable, connections closed when a certificate
//     they were opened or verified with is withdrawn, a bad file keeping the
//     last good credential.
//
//   - OwnCredentialGuard: the process's OWN API-server credential. A process
//     whose ServiceAccount was deleted and recreated keeps running and Ready
//     while every request fails with 401. The guard re-reads the credential on
//     a 401 (BearerTokenFile only), counts 401s that persist after that, and
//     after Threshold of them in a row within Window either exits the process
//     or reports unhealthy through a healthz-shaped checker. It is a separate
//     type with its own installer (InstallOnOwnConfig) that refuses a
//     rest.Config already carrying a member token wrapper: one bad member
//     Secret must never crash-loop the whole Karmada controller-manager.
//
// What it draws on: client-go's transport package (transport.WrapperFunc,
// utilnet.RoundTripperWrapper, the bearerAuthRoundTripper request cloning,
// the file token source's trimming and its reasoned refresh period), and
// oauth2.TokenSource. It goes beyond client-go where client-go is weak:
// cachingTokenSource holds its write lock while the source is read, and
// ResettableTokenSourceWrapTransport resets on a 401 but still fails that
// request, which costs an informer a failed LIST/WATCH plus reflector backoff.
//
// Metrics (prefix holdfast_member_credential_ and holdfast_own_credential_)
// are registered on a caller-supplied prometheus.Registerer so they appear
// inside the upstream binary's own metrics endpoint. No token ever appears in
// a log line, error, metric or Health value.
//
// Imports are limited to what every pinned upstream already depends on
// (client-go, apimachinery, klog/logr, client_golang, oauth2, k8s.io/utils):
// this package is copied into each upstream tree.
package membercred
