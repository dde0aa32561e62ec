package node

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/group/membership"
	"github.com/rsbd/rsbd/metrics"
)

// memberMetric is one labelled value of a membership metric family.
type memberMetric struct {
	label string
	value func(membership.Stats) uint64
}

// membershipFamilies are the membership counters exported at scrape time:
// per family its name, help, label name and labelled values. Label values
// are fixed; a family's values add up to what its help describes.
var membershipFamilies = []struct {
	name, help, label string
	values            []memberMetric
}{
	{"rsbd_membership_states_total", "Peer interest states received, by what became of them.", "result", []memberMetric{
		{"applied", func(s membership.Stats) uint64 { return s.StatesApplied }},
		{"stale", func(s membership.Stats) uint64 { return s.StatesStale }},
		{"departed", func(s membership.Stats) uint64 { return s.StatesDeparted }},
		{"wrong_instance", func(s membership.Stats) uint64 { return s.StatesWrongInstance }},
		{"rejected", func(s membership.Stats) uint64 { return s.StatesRejected }},
		{"pending", func(s membership.Stats) uint64 { return s.StatesPending }},
	}},
	{"rsbd_membership_drops_total", "Membership messages, states and events dropped, by reason.", "reason", []memberMetric{
		{"decode_error", func(s membership.Stats) uint64 { return s.MalformedMsgs }},
		{"unknown_kind", func(s membership.Stats) uint64 { return s.UnknownMsgs }},
		{"bad_metadata", func(s membership.Stats) uint64 { return s.MetaInvalid }},
		{"pending_full", func(s membership.Stats) uint64 { return s.PendingDropped }},
		{"event_queue_full", func(s membership.Stats) uint64 { return s.EventsDropped }},
		{"ack_limit", func(s membership.Stats) uint64 { return s.AckDrops }},
		{"full_state_limit", func(s membership.Stats) uint64 { return s.FullDrops }},
		{"table_truncated", func(s membership.Stats) uint64 { return s.TableTruncated }},
	}},
	{"rsbd_membership_pushes_total", "Pushes of the local interest state over TCP, by outcome.", "result", []memberMetric{
		{"sent", func(s membership.Stats) uint64 { return s.Pushes }},
		{"error", func(s membership.Stats) uint64 { return s.PushErrors }},
		{"skipped", func(s membership.Stats) uint64 { return s.PushesSkipped }},
	}},
	{"rsbd_membership_deltas_total", "Interest state deltas, by what happened to them.", "result", []memberMetric{
		{"sent", func(s membership.Stats) uint64 { return s.DeltasSent }},
		{"applied", func(s membership.Stats) uint64 { return s.DeltasApplied }},
		{"missed", func(s membership.Stats) uint64 { return s.DeltaMisses }},
	}},
	{"rsbd_membership_full_states_on_request_total", "Whole interest states sent because a peer missed a delta.", "", []memberMetric{
		{"", func(s membership.Stats) uint64 { return s.FullOnRequest }},
	}},
	{"rsbd_membership_joins_total", "Attempts of the join loop to reach the seeds, by whether one answered.", "result", []memberMetric{
		{"ok", func(s membership.Stats) uint64 { return s.JoinsOK }},
		{"failed", func(s membership.Stats) uint64 { return s.JoinsFailed }},
	}},
	{"rsbd_membership_name_conflicts_total", "Node names claimed from two addresses.", "", []memberMetric{
		{"", func(s membership.Stats) uint64 { return s.Conflicts }},
	}},
}

// registerMembershipCollector exports the membership counters, read from
// one snapshot per scrape.
func (n *Node) registerMembershipCollector() {
	var ms []metrics.SnapshotMetric[membership.Stats]
	for _, f := range membershipFamilies {
		for _, v := range f.values {
			m := metrics.SnapshotMetric[membership.Stats]{Name: f.name, Help: f.help, Type: prometheus.CounterValue,
				Value: func(s membership.Stats) float64 { return float64(v.value(s)) }}
			if f.label != "" {
				m.Labels = prometheus.Labels{f.label: v.label}
			}
			ms = append(ms, m)
		}
	}
	if err := n.m.Register(metrics.NewSnapshotCollector(n.mem.Stats, ms...)); err != nil {
		n.log.Error("cannot register membership metrics", "err", err)
	}
}
