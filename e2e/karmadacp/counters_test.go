//go:build e2e

package karmadacp

import (
	"context"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
)

// scrapeTimeout bounds one scrape of one component: a loopback GET that
// takes milliseconds when the component answers.
const scrapeTimeout = 10 * time.Second

// credentialCounters are the membercred counters of every component with
// a metrics URL, for some member clusters, at one moment (the baseline);
// note reports what changed since, per binary. One line in a scenario,
// placed before the rotation:
//
//	defer countCredentials(s, e.cp, memberName).note()
type credentialCounters struct {
	s        *e2ereport.Run
	cp       *karmadacp.ControlPlane
	clusters []string
	before   map[counterKey]membercredmetrics.MemberCredential
}

type counterKey struct {
	component karmadacp.Component
	cluster   string
}

// credentialChange is what one component counted for one cluster between
// the baseline and note; served is false when it serves no membercred
// series for the cluster (a pristine binary, or a component that never
// reached the member).
type credentialChange struct {
	membercredmetrics.MemberCredential
	served bool
}

// countCredentials takes the baseline now. A failed scrape fails the
// scenario (errorf): the report must not show a binary's counters as
// unchanged when they were never read.
func countCredentials(s *e2ereport.Run, cp *karmadacp.ControlPlane, clusters ...string) *credentialCounters {
	c := &credentialCounters{s: s, cp: cp, clusters: clusters, before: map[counterKey]membercredmetrics.MemberCredential{}}
	for _, comp := range cp.MetricsComponents() {
		for _, cluster := range clusters {
			counters, _, err := c.scrape(comp, cluster)
			if err != nil {
				s.Errorf("membercred counters before the rotation: %v", err)
				continue
			}
			c.before[counterKey{comp, cluster}] = counters
		}
	}
	return c
}

func (c *credentialCounters) scrape(comp karmadacp.Component, cluster string) (membercredmetrics.MemberCredential, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	return c.cp.MemberCredential(ctx, comp, cluster)
}

// note adds one line per component with a metrics URL and cluster to the
// scenario's notes ("karmada-controller-manager member1: refreshes +1,
// unauthorized +0, recovered +0, persisted +0") and returns the changes,
// for a scenario's own checks.
func (c *credentialCounters) note() map[counterKey]credentialChange {
	out := map[counterKey]credentialChange{}
	for _, comp := range c.cp.MetricsComponents() {
		for _, cluster := range c.clusters {
			now, served, err := c.scrape(comp, cluster)
			if err != nil {
				c.s.Errorf("membercred counters after the rotation: %v", err)
				continue
			}
			key := counterKey{comp, cluster}
			if !served {
				c.s.Notef("%s %s: no membercred counters served", comp, cluster)
				out[key] = credentialChange{}
				continue
			}
			// A component that started serving after the baseline (or was
			// not scraped then) counted from zero.
			d := now.Sub(c.before[key])
			c.s.Notef("%s %s: %s", comp, cluster, d.Change())
			out[key] = credentialChange{MemberCredential: d, served: true}
		}
	}
	return out
}
