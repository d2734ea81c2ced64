package membercred

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const kubeconfigSubsystem = "kubeconfig_credential"

// KubeconfigMetrics holds the collectors of KubeconfigCredentials, labelled
// by `kubeconfig` (KubeconfigOptions.Name). A nil *KubeconfigMetrics
// records nothing. They are apart from Metrics because a kubeconfig may be
// the process's own credential (karmada-agent's) as well as a member's
// (karmada-scheduler-estimator's).
type KubeconfigMetrics struct {
	reads        *prometheus.CounterVec
	readFailures *prometheus.CounterVec
	usable       *prometheus.GaugeVec
	lastRead     *prometheus.GaugeVec
	unauth       *prometheus.CounterVec
	recoveredC   *prometheus.CounterVec
	persistedC   *prometheus.CounterVec
}

// NewKubeconfigMetrics creates the collectors and registers them on reg,
// adopting equal ones already there (as NewMetrics does).
func NewKubeconfigMetrics(reg prometheus.Registerer) (*KubeconfigMetrics, error) {
	if reg == nil {
		return nil, errors.New("membercred: NewKubeconfigMetrics needs a prometheus.Registerer, got nil")
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: kubeconfigSubsystem, Name: name, Help: help,
		}, append([]string{"kubeconfig"}, labels...))
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: kubeconfigSubsystem, Name: name, Help: help,
		}, []string{"kubeconfig"})
	}
	m := &KubeconfigMetrics{
		reads:        counter("reads_total", "Reads of a kubeconfig file (and the files it names) that yielded a usable credential."),
		readFailures: counter("read_failures_total", "Reads of a kubeconfig file that yielded no usable credential; the last good one stays in use.", "reason"),
		usable: gauge("usable", "1 when the last read of the kubeconfig file yielded a usable credential, 0 while the last good one is kept because "+
			"the file cannot be read or holds no usable credential (rotation is not followed until it is fixed)."),
		lastRead:   gauge("last_read_timestamp_seconds", "Unix time the kubeconfig file last yielded a usable credential."),
		unauth:     counter("unauthorized_total", "Requests carrying the kubeconfig's credential that got 401 Unauthorized."),
		recoveredC: counter("unauthorized_recovered_total", "401 Unauthorized hidden from the caller by one replay with a credential freshly read from the file."),
		persistedC: counter("unauthorized_persisted_total", "401 Unauthorized returned although the file had just been re-read: it holds a credential the server rejects."),
	}
	var errs []error
	adopt := func(c prometheus.Collector) prometheus.Collector {
		got, err := registerOrAdopt(reg, c)
		if err != nil {
			errs = append(errs, err)
		}
		return got
	}
	m.reads = adopt(m.reads).(*prometheus.CounterVec)
	m.readFailures = adopt(m.readFailures).(*prometheus.CounterVec)
	m.usable = adopt(m.usable).(*prometheus.GaugeVec)
	m.lastRead = adopt(m.lastRead).(*prometheus.GaugeVec)
	m.unauth = adopt(m.unauth).(*prometheus.CounterVec)
	m.recoveredC = adopt(m.recoveredC).(*prometheus.CounterVec)
	m.persistedC = adopt(m.persistedC).(*prometheus.CounterVec)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("membercred: registering kubeconfig metrics: %w", err)
	}
	return m, nil
}

func (m *KubeconfigMetrics) read(name string, at time.Time) {
	if m == nil {
		return
	}
	m.reads.WithLabelValues(name).Inc()
	m.usable.WithLabelValues(name).Set(1)
	m.lastRead.WithLabelValues(name).Set(float64(at.UnixNano()) / 1e9)
}

func (m *KubeconfigMetrics) failed(name, reason string) {
	if m == nil {
		return
	}
	m.readFailures.WithLabelValues(name, reason).Inc()
	m.usable.WithLabelValues(name).Set(0)
}

func (m *KubeconfigMetrics) unauthorized(name string) {
	if m != nil {
		m.unauth.WithLabelValues(name).Inc()
	}
}

func (m *KubeconfigMetrics) recovered(name string) {
	if m != nil {
		m.recoveredC.WithLabelValues(name).Inc()
	}
}

func (m *KubeconfigMetrics) persisted(name string) {
	if m != nil {
		m.persistedC.WithLabelValues(name).Inc()
	}
}
