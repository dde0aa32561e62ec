package membership

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rsbd/rsbd/metrics"
)

// Family is one metric family Collector exports: its name, help, label
// name ("" for an unlabelled family) and labelled values. Label values
// are fixed; a family's values add up to what its help describes.
type Family struct {
	Name, Help, Label string
	Values            []FamilyValue
}

// FamilyValue is one labelled value of a Family, read from a Stats.
type FamilyValue struct {
	Label string
	Value func(Stats) uint64
}

// Families returns the families Collector exports, in a fixed order.
func Families() []Family { return slices.Clone(families) }

// families are the membership counters exported at scrape time.
var families = []Family{
	{"rsbd_membership_states_total", "Peer interest states received, by what became of them.", "result", []FamilyValue{
		{"applied", func(s Stats) uint64 { return s.StatesApplied }},
		{"stale", func(s Stats) uint64 { return s.StatesStale }},
		{"departed", func(s Stats) uint64 { return s.StatesDeparted }},
		{"wrong_instance", func(s Stats) uint64 { return s.StatesWrongInstance }},
		{"rejected", func(s Stats) uint64 { return s.StatesRejected }},
		{"pending", func(s Stats) uint64 { return s.StatesPending }},
	}},
	{"rsbd_membership_drops_total", "Membership messages, states and events dropped, by reason.", "reason", []FamilyValue{
		{"decode_error", func(s Stats) uint64 { return s.MalformedMsgs }},
		{"unknown_kind", func(s Stats) uint64 { return s.UnknownMsgs }},
		{"bad_metadata", func(s Stats) uint64 { return s.MetaInvalid }},
		{"pending_full", func(s Stats) uint64 { return s.PendingDropped }},
		{"event_queue_full", func(s Stats) uint64 { return s.EventsDropped }},
		{"ack_limit", func(s Stats) uint64 { return s.AckDrops }},
		{"full_state_limit", func(s Stats) uint64 { return s.FullDrops }},
		{"table_truncated", func(s Stats) uint64 { return s.TableTruncated }},
		{"gossip_malformed", func(s Stats) uint64 { return s.GossipMalformed }},
	}},
	{"rsbd_membership_pushes_total", "Pushes of the local interest state over TCP, by outcome.", "result", []FamilyValue{
		{"sent", func(s Stats) uint64 { return s.Pushes }},
		{"error", func(s Stats) uint64 { return s.PushErrors }},
		{"skipped", func(s Stats) uint64 { return s.PushesSkipped }},
	}},
	{"rsbd_membership_deltas_total", "Interest state deltas, by what happened to them.", "result", []FamilyValue{
		{"sent", func(s Stats) uint64 { return s.DeltasSent }},
		{"applied", func(s Stats) uint64 { return s.DeltasApplied }},
		{"missed", func(s Stats) uint64 { return s.DeltaMisses }},
	}},
	{"rsbd_membership_full_states_on_request_total", "Whole interest states sent because a peer missed a delta.", "", []FamilyValue{
		{"", func(s Stats) uint64 { return s.FullOnRequest }},
	}},
	{"rsbd_membership_joins_total", "Attempts of the join loop to reach the seeds, by whether one answered.", "result", []FamilyValue{
		{"ok", func(s Stats) uint64 { return s.JoinsOK }},
		{"failed", func(s Stats) uint64 { return s.JoinsFailed }},
	}},
	{"rsbd_membership_name_conflicts_total", "Node names claimed from two addresses.", "", []FamilyValue{
		{"", func(s Stats) uint64 { return s.Conflicts }},
	}},
}

// Collector returns the Prometheus collector of the membership counters
// (rsbd_membership_*), read from one snapshot of stats per scrape.
func Collector(stats func() Stats) prometheus.Collector {
	var ms []metrics.SnapshotMetric[Stats]
	for _, f := range families {
		for _, v := range f.Values {
			m := metrics.SnapshotMetric[Stats]{Name: f.Name, Help: f.Help, Type: prometheus.CounterValue,
				Value: func(s Stats) float64 { return float64(v.Value(s)) }}
			if f.Label != "" {
				m.Labels = prometheus.Labels{f.Label: v.Label}
			}
			ms = append(ms, m)
		}
	}
	return metrics.NewSnapshotCollector(stats, ms...)
}
